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
