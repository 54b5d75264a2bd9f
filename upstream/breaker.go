package upstream

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// breaker is an upstream's circuit breaker (docs/design.md §10b). It opens
// only on evidence that the upstream as a whole is down, read from a
// sliding window of the calls' outcomes: at least minCalls calls, a
// failure ratio of at least ratio, failures spread over at least spread
// (so a burst of one instant, such as the calls in flight at a replica
// that was killed, is not a dead upstream) and reported by at least two
// callers (so one caller looping on a failing tool cannot deny the
// others). Open, calls are answered at once, and the gateway itself asks
// the upstream whether it is back (probe), every interval: no caller's
// call is the probe, so none can win it, and the first good answer
// closes the circuit for all.
type breaker struct {
	cfg breakerConfig
	// probe asks the upstream whether it answers; nil means the breaker
	// never opens (nothing could close it again).
	probe func(context.Context) error
	// changed is told of each change of state, outside the lock.
	changed func(open bool, why string)

	open      atomic.Bool
	anonymous atomic.Int64
	// buckets count the outcomes of the last window, a second each;
	// successes touch only atomics, failures take mu.
	buckets []bucket

	mu       sync.Mutex
	until    time.Time // while open: when the next probe is due
	stopping bool
	// stopped ends with close, and with it a probe under way: an upstream
	// that does not answer must not hold up its client's close.
	stopped context.Context
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// breakerConfig is the breaker's policy; its zero fields take the
// defaults of newBreaker.
type breakerConfig struct {
	window   time.Duration // the outcomes looked at
	minCalls int           // fewer calls in the window never open it
	ratio    float64       // the failure ratio that opens it
	spread   time.Duration // failures closer together than this are one burst
	interval time.Duration // between probes, while open
}

const (
	defaultBreakerWindow   = 10 * time.Second
	defaultBreakerMinCalls = 20
	defaultBreakerRatio    = 0.5
	defaultBreakerSpread   = time.Second
	defaultBreakerInterval = 500 * time.Millisecond
	breakerProbeTimeout    = 5 * time.Second
)

// bucket is one second of outcomes. epoch is the second it counts; a
// bucket found holding an older second is cleared before it is counted
// into.
type bucket struct {
	epoch      atomic.Int64
	calls      atomic.Int64
	failures   atomic.Int64
	first      time.Time // the bucket's first and last failure, under mu
	last       time.Time
	caller     string // the first failing caller, under mu
	twoCallers bool   // another caller failed too, under mu
}

func newBreaker(cfg breakerConfig, probe func(context.Context) error, changed func(open bool, why string)) *breaker {
	if cfg.window <= 0 {
		cfg.window = defaultBreakerWindow
	}
	if cfg.window < time.Second {
		cfg.window = time.Second
	}
	if cfg.minCalls <= 0 {
		cfg.minCalls = defaultBreakerMinCalls
	}
	if cfg.ratio <= 0 || cfg.ratio > 1 {
		cfg.ratio = defaultBreakerRatio
	}
	if cfg.spread <= 0 {
		cfg.spread = defaultBreakerSpread
	}
	if cfg.interval <= 0 {
		cfg.interval = defaultBreakerInterval
	}
	if changed == nil {
		changed = func(bool, string) {}
	}
	b := &breaker{
		cfg:     cfg,
		probe:   probe,
		changed: changed,
		buckets: make([]bucket, int(cfg.window/time.Second)),
	}
	b.stopped, b.stop = context.WithCancel(context.Background())
	return b
}

// allow reports whether a call may go to the upstream now, and if not,
// how long until the next probe may let calls through again.
func (b *breaker) allow(now time.Time) (ok bool, wait time.Duration) {
	if b == nil || !b.open.Load() {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open.Load() {
		return true, 0
	}
	wait = b.until.Sub(now)
	if wait <= 0 {
		wait = b.cfg.interval // a probe is under way
	}
	return false, wait
}

// record counts the outcome of a call that allow let through: failed
// reports a failure of the upstream itself (not a tool error, a refusal
// or the client going away, which say nothing of its health), caller who
// made it (its identity, or its address without auth).
func (b *breaker) record(failed bool, caller string, now time.Time) {
	if b == nil || b.probe == nil {
		return
	}
	bk := b.bucket(now)
	bk.calls.Add(1)
	if !failed {
		return
	}
	bk.failures.Add(1)
	if caller == "" {
		// Without an identity each failure is taken for another
		// caller's: the breaker then opens as a plain ratio would.
		caller = "\x00" + strconv.FormatInt(b.anonymous.Add(1), 10)
	}
	b.mu.Lock()
	if bk.first.IsZero() || now.Before(bk.first) {
		bk.first = now
	}
	if now.After(bk.last) {
		bk.last = now
	}
	switch {
	case bk.caller == "":
		bk.caller = caller
	case bk.caller != caller:
		bk.twoCallers = true
	}
	why, trip := b.evidence(now)
	b.mu.Unlock()
	if trip {
		b.trip(now, why)
	}
}

// trip opens the circuit, unless it is open already, and starts the
// probes.
func (b *breaker) trip(now time.Time, why string) {
	b.mu.Lock()
	if b.open.Load() || b.stopping || b.probe == nil {
		b.mu.Unlock()
		return
	}
	b.open.Store(true)
	b.until = now.Add(b.cfg.interval)
	b.done.Add(1)
	go b.probing()
	b.mu.Unlock()
	b.changed(true, why)
}

// bucket returns the bucket of now's second, cleared if it held an older
// one.
func (b *breaker) bucket(now time.Time) *bucket {
	sec := now.Unix()
	bk := &b.buckets[int(uint64(sec)%uint64(len(b.buckets)))]
	if e := bk.epoch.Load(); e != sec && bk.epoch.CompareAndSwap(e, sec) {
		bk.calls.Store(0)
		bk.failures.Store(0)
		b.mu.Lock()
		bk.first, bk.last, bk.caller, bk.twoCallers = time.Time{}, time.Time{}, "", false
		b.mu.Unlock()
	}
	return bk
}

// evidence reads the window, under mu: whether it shows the upstream as a
// whole failing, and in words why.
func (b *breaker) evidence(now time.Time) (string, bool) {
	oldest := now.Unix() - int64(len(b.buckets)) + 1
	var calls, failures int64
	var first, last time.Time
	caller, callers := "", 0
	for i := range b.buckets {
		bk := &b.buckets[i]
		if bk.epoch.Load() < oldest {
			continue
		}
		calls += bk.calls.Load()
		f := bk.failures.Load()
		if f == 0 || bk.first.IsZero() {
			continue
		}
		failures += f
		if first.IsZero() || bk.first.Before(first) {
			first = bk.first
		}
		if bk.last.After(last) {
			last = bk.last
		}
		switch {
		case bk.twoCallers:
			callers = 2
		case caller == "":
			caller, callers = bk.caller, max(callers, 1)
		case bk.caller != caller:
			callers = 2
		}
	}
	if calls < int64(b.cfg.minCalls) || float64(failures) < b.cfg.ratio*float64(calls) {
		return "", false
	}
	if last.Sub(first) < b.cfg.spread || callers < 2 {
		return "", false
	}
	return fmtEvidence(failures, calls, last.Sub(first)), true
}

// probing asks the upstream, every interval while the circuit is open,
// whether it answers; the first answer closes the circuit.
func (b *breaker) probing() {
	defer b.done.Done()
	t := time.NewTimer(b.cfg.interval)
	defer t.Stop()
	for {
		select {
		case <-b.stopped.Done():
			return
		case <-t.C:
		}
		// The interval is how often to ask, not how fast the upstream
		// must answer: one slow to answer, up again, closes the circuit.
		ctx, cancel := context.WithTimeout(b.stopped, breakerProbeTimeout)
		err := b.probe(ctx)
		cancel()
		if b.stopped.Err() != nil {
			return
		}
		if err == nil {
			b.mu.Lock()
			for i := range b.buckets {
				bk := &b.buckets[i]
				bk.epoch.Store(0)
				bk.calls.Store(0)
				bk.failures.Store(0)
				bk.first, bk.last, bk.caller, bk.twoCallers = time.Time{}, time.Time{}, "", false
			}
			b.open.Store(false)
			b.mu.Unlock()
			b.changed(false, "the upstream answered a probe")
			return
		}
		b.mu.Lock()
		b.until = time.Now().Add(b.cfg.interval)
		b.mu.Unlock()
		t.Reset(b.cfg.interval)
	}
}

// close stops the probes and waits for the one under way.
func (b *breaker) close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if !b.stopping {
		b.stopping = true
		b.stop()
	}
	b.mu.Unlock()
	b.done.Wait()
}

// fmtEvidence says why the circuit opened, for the log.
func fmtEvidence(failures, calls int64, over time.Duration) string {
	return fmt.Sprintf("%d of the last %d calls failed, over %s, for more than one caller", failures, calls, over.Round(time.Millisecond))
}
