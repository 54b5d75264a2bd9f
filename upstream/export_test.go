package upstream

import "time"

// SetFailureLogInterval sets how often u logs a failed call of one class:
// a test that floods sets one no run outlasts, so that each class logs
// exactly once.
func SetFailureLogInterval(u *Upstream, d time.Duration) { u.c.fails.Interval = d }

// BreakerCounts returns the calls and the failures of the upstream itself
// that u's circuit breaker counts in its window.
func BreakerCounts(u *Upstream) (calls, failures int64) {
	b := u.c.breaker
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.buckets {
		calls += b.buckets[i].calls.Load()
		failures += b.buckets[i].failures.Load()
	}
	return calls, failures
}

// OpenCircuit opens u's circuit breaker as evidence would: its calls are
// answered at once until a probe, an interval later, finds the upstream.
func OpenCircuit(u *Upstream) { u.c.breaker.trip(time.Now(), "a test opened it") }

// WatchStdioStarts returns a channel that receives the pid of each child
// the stdio upstream u starts from now on (its reaper's), once ready.
func WatchStdioStarts(u *Upstream) <-chan int {
	ch := make(chan int, 64)
	s := u.c.stdio
	s.mu.Lock()
	s.starts = ch
	s.mu.Unlock()
	return ch
}

// RestartStdioNow arranges that the stdio upstream u's next restart
// waits, not for its backoff, but until the returned func is called.
func RestartStdioNow(u *Upstream) (now func()) {
	ch := make(chan struct{}, 1)
	s := u.c.stdio
	s.mu.Lock()
	s.restartNow = ch
	s.mu.Unlock()
	return func() { ch <- struct{}{} }
}

// SetStdioSupervision sets the supervisor's figures for the test's life.
func SetStdioSupervision(first time.Duration, budget int, down time.Duration) (restore func()) {
	f, b, d := restartFirst, restartBudget, downWait
	restartFirst, restartBudget, downWait = first, budget, down
	return func() { restartFirst, restartBudget, downWait = f, b, d }
}

// StdioPID returns the pid of the stdio upstream u's ready child (its
// reaper's), 0 when none is ready.
func StdioPID(u *Upstream) int {
	s := u.c.stdio
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		return 0
	}
	return s.ready.pidNum
}

// SetCallerIdle sets how long a caller's child or session of the upstream
// o makes (PerCaller) may go unused before it is ended: that upstream's
// alone, so that tests in parallel do not share it.
func SetCallerIdle(o *Options, d time.Duration) { o.callerIdle = d }
