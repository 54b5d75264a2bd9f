package actors

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestToolContextWithoutDone: a tool that never asks for Done sees the
// deadline through Deadline and Err, its parent's values and cancellation,
// and costs no allocation.
func TestToolContextWithoutDone(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	var c toolContext
	c.init(parent, 30*time.Millisecond)
	defer c.release()

	if dl, ok := c.Deadline(); !ok || time.Until(dl) > 30*time.Millisecond || time.Until(dl) < 0 {
		t.Fatalf("Deadline = %v, %v", dl, ok)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err before the deadline = %v", err)
	}
	if v := c.Value(ctxKey{}); v != "v" {
		t.Fatalf("Value = %v", v)
	}
	if n := testing.AllocsPerRun(100, func() { _ = c.Err(); _, _ = c.Deadline(); _ = c.Value(ctxKey{}) }); n != 0 {
		t.Fatalf("Err/Deadline/Value allocate %v times", n)
	}
	if c.timed.Load() != nil {
		t.Fatal("a timer context was built without Done being called")
	}
	time.Sleep(40 * time.Millisecond)
	if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err past the deadline = %v", err)
	}
	if err := context.Cause(&c); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Cause past the deadline = %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done is open past the deadline")
	}
}

// TestToolContextDone: Done closes at the deadline, a derived context ends
// with it, and the parent's cancellation reaches both.
func TestToolContextDone(t *testing.T) {
	var c toolContext
	c.init(context.Background(), 20*time.Millisecond)
	defer c.release()
	child, stop := context.WithCancel(&c)
	defer stop()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the derived context did not end at the deadline")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, child %v", c.Err(), child.Err())
	}

	parent, cancel := context.WithCancel(context.Background())
	var p toolContext
	p.init(parent, time.Minute)
	defer p.release()
	done := p.Done()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's cancellation did not close Done")
	}
	if !errors.Is(p.Err(), context.Canceled) {
		t.Fatalf("Err after the parent's cancel = %v", p.Err())
	}

	// Without Done, the parent's cancellation shows in Err at once.
	parent2, cancel2 := context.WithCancel(context.Background())
	var q toolContext
	q.init(parent2, time.Minute)
	defer q.release()
	cancel2()
	if !errors.Is(q.Err(), context.Canceled) {
		t.Fatalf("Err after the parent's cancel = %v", q.Err())
	}
}

// TestToolContextEarlierParentDeadline: the parent's deadline wins when it
// is the earlier one.
func TestToolContextEarlierParentDeadline(t *testing.T) {
	parent, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var c toolContext
	c.init(parent, time.Hour)
	defer c.release()
	pd, _ := parent.Deadline()
	if dl, _ := c.Deadline(); !dl.Equal(pd) {
		t.Fatalf("Deadline = %v, parent's %v", dl, pd)
	}
}

// TestToolContextRelease: once the call is over, the context is over too,
// whether or not Done was asked for before.
func TestToolContextRelease(t *testing.T) {
	var a toolContext
	a.init(context.Background(), time.Minute)
	done := a.Done()
	a.release()
	select {
	case <-done:
	default:
		t.Fatal("release did not close Done")
	}

	var b toolContext
	b.init(context.Background(), time.Minute)
	b.release()
	if !errors.Is(b.Err(), context.Canceled) {
		t.Fatalf("Err after release = %v", b.Err())
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Done asked for after release is open")
	}
}

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
// next call watched wakes it, however many times that happens.
func TestWatchdogWakes(t *testing.T) {
	t.Parallel()
	answered := make(chan *Call, 1)
	w := newWatchdog(4, func(c *Call) { answered <- c }, nil)
	defer w.close()
	for round := range 3 {
		c := &Call{}
		c.tctx.deadline = time.Now().Add(-deadlineGrace)
		w.watch(c)
		select {
		case got := <-answered:
			if got != c {
				t.Fatalf("round %d: answered another call", round)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: an overdue call was not answered", round)
		}
		// Let the next sweep find nothing, so the goroutine goes to sleep.
		deadline := time.Now().Add(10 * time.Second)
		for !w.sleeping.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the watchdog never went to sleep", round)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
