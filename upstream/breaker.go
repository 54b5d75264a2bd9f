package upstream

import (
	"sync"
	"sync/atomic"
	"time"
)

// breaker is an upstream's circuit breaker. Closed, every call goes
// through; threshold consecutive failures of the upstream itself open it
// for cooldown, during which calls are answered at once; after it, one
// call goes through (half open), and its outcome closes the circuit or
// opens it for another cooldown. So a dead upstream costs its callers no
// wait, and one that returns is back in service with its first success,
// without anyone reconfiguring the gateway.
type breaker struct {
	threshold int // <= 0: never opens
	cooldown  time.Duration

	// open and counting are read without the lock by every call: a closed
	// circuit with no failure counted costs two loads.
	open, counting atomic.Bool

	mu       sync.Mutex
	failures int
	until    time.Time // end of the cooldown, while open
	probing  bool      // the half-open call is out
}

// allow reports whether a call may go to the upstream now, and if not,
// how long until one may; probe marks the half-open call, whose outcome
// alone closes or reopens an open circuit.
func (b *breaker) allow(now time.Time) (ok bool, wait time.Duration, probe bool) {
	if !b.open.Load() {
		return true, 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open.Load() {
		return true, 0, false
	}
	if now.Before(b.until) {
		return false, b.until.Sub(now), false
	}
	if b.probing {
		return false, b.cooldown, false
	}
	b.probing = true
	return true, 0, true
}

// record takes the outcome of a call that allow let through: failed
// reports a failure of the upstream itself (not a tool error, a refusal
// or the client going away, which say nothing of its health).
func (b *breaker) record(failed, probe bool, now time.Time) {
	if b.threshold <= 0 {
		return
	}
	if !probe && b.open.Load() {
		// A call let through before the circuit opened: the probe's
		// outcome, not its, decides.
		return
	}
	if !failed {
		if !b.open.Load() && !b.counting.Load() {
			return
		}
		b.mu.Lock()
		b.failures, b.probing = 0, false
		b.open.Store(false)
		b.counting.Store(false)
		b.mu.Unlock()
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	b.counting.Store(true)
	if probe || b.failures >= b.threshold {
		b.probing = false
		b.until = now.Add(b.cooldown)
		b.open.Store(true)
	}
}

// release takes the outcome of a call that allow let through and that
// says nothing of the upstream's health (the client went away): if it was
// the half-open call, the next call may be one.
func (b *breaker) release(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}
