package actors

import (
	"testing"
	"testing/synctest"
)

func result(s string) Reply { return Reply{Result: []byte(s)} }

// TestCallSettleOnce: the first reply wins and is what wait returns,
// whether it came before wait or while wait waited on another goroutine;
// later replies are dropped.
func TestCallSettleOnce(t *testing.T) {
	t.Parallel()
	never := make(chan struct{})

	c := new(Call)
	if !c.settle(result("1")) || c.settle(result("2")) {
		t.Fatal("settle: want the first kept and the second refused")
	}
	if r, ok := c.wait(never); !ok || string(r.Result) != "1" {
		t.Fatalf("wait after = %+v %v, want reply 1", r, ok)
	}

	synctest.Test(t, func(t *testing.T) {
		// Made inside the bubble: only then does a goroutine blocked on it
		// count as durably blocked for synctest.Wait.
		never := make(chan struct{})
		c := new(Call)
		got := make(chan Reply)
		go func() {
			r, _ := c.wait(never)
			got <- r
		}()
		synctest.Wait() // the waiter found no reply and blocks
		c.settle(result("3"))
		c.settle(result("4"))
		if r := <-got; string(r.Result) != "3" {
			t.Fatalf("wait while waiting = %+v, want reply 3", r)
		}
	})
}

// TestCallWaitDone: a requester whose context ends first stops waiting.
func TestCallWaitDone(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	close(done)
	if _, ok := new(Call).wait(done); ok {
		t.Fatal("wait = settled, want done first")
	}
}
