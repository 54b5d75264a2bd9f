package actors

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchdogSweep: a sweep answers exactly the calls past due, keeps the
// others, and forgotten calls are never answered.
func TestWatchdogSweep(t *testing.T) {
	var answered []*Call
	w := &watchdog{shards: make([]watchShard, 4), wake: make(chan struct{}, 1), done: make(chan struct{}), overdue: func(c *Call) { answered = append(answered, c) }}
	now := time.Now()
	calls := make([]*Call, 4)
	for i := range calls {
		calls[i] = &Call{}
		calls[i].tctx.deadline = now.Add(time.Duration(i)*time.Second - deadlineGrace)
		w.watch(calls[i])
	}
	w.forget(calls[0])
	if more := w.sweep(now.Add(1500 * time.Millisecond)); !more {
		t.Fatal("sweep says nothing is left")
	}
	if len(answered) != 1 || answered[0] != calls[1] {
		t.Fatalf("answered %v, want only call 1", answered)
	}
	w.forget(calls[2])
	w.forget(calls[3])
	w.forget(calls[3]) // twice is harmless
	if more := w.sweep(now.Add(time.Hour)); more || len(answered) != 1 {
		t.Fatalf("after forgetting all: more %v, answered %d", more, len(answered))
	}
}

// TestWatchdogContainsPanics: a panic while answering an overdue call is
// reported and does not end the process.
func TestWatchdogContainsPanics(t *testing.T) {
	var got any
	w := &watchdog{shards: make([]watchShard, 1), wake: make(chan struct{}, 1), done: make(chan struct{}),
		overdue: func(*Call) { panic("boom") }, fault: func(r any) { got = r }}
	c := &Call{}
	c.tctx.deadline = time.Now().Add(-deadlineGrace)
	w.watch(c)
	w.sweep(time.Now())
	if got != "boom" {
		t.Fatalf("fault got %v", got)
	}
}

// TestWatchdogWakes: the goroutine sleeps once nothing is watched, and the
// next call watched wakes it, however many times that happens. In a
// synctest bubble: a sleeping watchdog is a goroutine durably blocked, so
// synctest.Wait returns exactly when it has gone to sleep.
func TestWatchdogWakes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		answered := make(chan *Call, 1)
		w := newWatchdog(4, func(c *Call) { answered <- c }, nil)
		defer w.close()
		for round := range 3 {
			c := &Call{}
			c.tctx.deadline = time.Now().Add(-deadlineGrace)
			w.watch(c)
			if got := <-answered; got != c {
				t.Fatalf("round %d: answered another call", round)
			}
			// The next sweep finds nothing, and the goroutine goes to sleep.
			synctest.Wait()
			if !w.sleeping.Load() {
				t.Fatalf("round %d: the watchdog did not go to sleep", round)
			}
		}
	})
}
