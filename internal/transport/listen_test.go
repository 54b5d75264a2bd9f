package transport

import "testing"

// TestAnswerBudgetHold: a listen stream's charge is taken at once or not
// at all, and given back whole; a server without a bound takes nothing, so
// giving back leaves it at nothing (never below).
func TestAnswerBudgetHold(t *testing.T) {
	unbounded := newAnswerBudget(0)
	if held, ok := unbounded.hold(700); !ok || held != 0 {
		t.Fatalf("no bound: held %d, ok %v; want 0, true", held, ok)
	}
	unbounded.adjust(0, 0)
	if got := unbounded.held.Load(); got != 0 {
		t.Fatalf("no bound: the budget holds %d", got)
	}

	b := newAnswerBudget(1000)
	first, ok := b.hold(700)
	if !ok || first != 700 {
		t.Fatalf("held %d, ok %v; want 700, true", first, ok)
	}
	if held, ok := b.hold(700); ok || held != 0 {
		t.Fatalf("past the budget: held %d, ok %v; want 0, false", held, ok)
	}
	b.adjust(first, 0)
	if got := b.held.Load(); got != 0 {
		t.Fatalf("after the stream ended the budget holds %d", got)
	}
}
