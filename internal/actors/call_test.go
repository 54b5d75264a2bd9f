package actors

import (
	"testing"
	"time"
)

// TestCallAnswerOnce: the first answer wins and is what await returns,
// whether it came before await or while await waited on another
// goroutine; later answers are dropped.
func TestCallAnswerOnce(t *testing.T) {
	t.Parallel()
	never := make(chan struct{})

	c := new(Call)
	if !c.answer(Answer{Code: 1}) || c.answer(Answer{Code: 2}) {
		t.Fatal("answer: want the first accepted and the second refused")
	}
	if a, ok := c.await(never); !ok || a.Code != 1 {
		t.Fatalf("await before = %+v %v, want code 1", a, ok)
	}

	c = new(Call)
	got := make(chan Answer)
	go func() {
		a, _ := c.await(never)
		got <- a
	}()
	// Let await find the call unanswered and wait (either order is right;
	// this makes the waiting one likely).
	time.Sleep(10 * time.Millisecond)
	c.answer(Answer{Code: 3})
	c.answer(Answer{Code: 4})
	if a := <-got; a.Code != 3 {
		t.Fatalf("await while waiting = %+v, want code 3", a)
	}
}

// TestCallAwaitDone: a requester whose context ends first stops waiting.
func TestCallAwaitDone(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	close(done)
	if _, ok := new(Call).await(done); ok {
		t.Fatal("await = answered, want done first")
	}
}
