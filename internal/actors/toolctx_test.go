package actors

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// TestToolContextWithoutDone: a tool that never asks for Done sees the
// deadline through Deadline and Err, its parent's values and cancellation,
// and costs no allocation. Time is synctest's: the deadline passes when
// every goroutine of the bubble waits, not after a real sleep.
func TestToolContextWithoutDone(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run in a parallel test.
	synctest.Test(t, testToolContextWithoutDone)
}

func testToolContextWithoutDone(t *testing.T) {
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
	t.Parallel()
	synctest.Test(t, testToolContextDone)
}

func testToolContextDone(t *testing.T) {
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
