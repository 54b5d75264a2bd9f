package main

import (
	"testing"
	"time"
)

// TestThrottle: within an interval one record is let through and the rest
// are counted; the first after the interval carries the count, once; a
// reset lets the next through at once, its count forgotten.
func TestThrottle(t *testing.T) {
	t.Parallel()
	th := &throttle{interval: time.Minute}
	t0 := time.Unix(1_000_000, 0)
	if ok, n := th.allow(t0); !ok || n != 0 {
		t.Fatalf("first record: %v, %d suppressed; want let through, 0", ok, n)
	}
	for i := range 5 {
		if ok, _ := th.allow(t0.Add(time.Duration(i+1) * time.Second)); ok {
			t.Fatalf("record %d within the interval let through", i+2)
		}
	}
	if ok, n := th.allow(t0.Add(time.Minute)); !ok || n != 5 {
		t.Fatalf("first record after the interval: %v, %d suppressed; want let through, 5", ok, n)
	}
	if ok, _ := th.allow(t0.Add(time.Minute + time.Second)); ok {
		t.Fatal("second record of the new interval let through")
	}
	th.reset()
	if ok, n := th.allow(t0.Add(time.Minute + 2*time.Second)); !ok || n != 0 {
		t.Fatalf("after a reset: %v, %d suppressed; want let through, 0 (the count forgotten)", ok, n)
	}
}
