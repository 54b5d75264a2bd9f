package transport

import (
	"context"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

func budgetTool(t *testing.T, name string, opts ...toolrun.Option) *toolrun.Tool {
	t.Helper()
	tool, err := toolrun.NewRaw(name, "A tool of the budget's tests.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) { return nil, nil }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestAnswerBudgetAccounting: a call reserves before its tool runs (a
// share of the budget while its tool is cold, then its tool's recent
// answer size), is charged its answer's real size when the answer exists,
// even past the budget, and gives everything back when it ends; an answer
// under chunkingThreshold is not charged, so a call of a tool answering
// small is admitted whatever the budget holds.
func TestAnswerBudgetAccounting(t *testing.T) {
	const limit = 16 << 20
	b := newAnswerBudget(limit)
	ctx := context.Background()
	// A call that must wait is refused at once: its client is gone.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	big, small := budgetTool(t, "big"), budgetTool(t, "small")

	// Cold: a sixteenth of the budget each, so sixteen at once.
	var reserved []int64
	for range coldShare {
		r, ok := b.admit(ctx, big)
		if !ok || r != limit/coldShare {
			t.Fatalf("a cold call: reserved %d, admitted %v; want %d", r, ok, limit/coldShare)
		}
		reserved = append(reserved, r)
	}
	if got := b.held.Load(); got != limit {
		t.Fatalf("sixteen cold calls hold %d, want %d", got, limit)
	}
	if _, ok := b.admit(gone, big); ok {
		t.Fatal("a seventeenth cold call was admitted past the budget")
	}
	// The answers exist: 3 MiB each, charged in full past the budget.
	const answer = 3 << 20
	for i := range reserved {
		b.adjust(reserved[i], answer)
		reserved[i] = answer
		b.observe("big", answer)
	}
	if got := b.held.Load(); got != coldShare*answer {
		t.Fatalf("the answers hold %d, want %d", got, coldShare*answer)
	}
	// A small tool's call is admitted, holding nothing, once it answered
	// small; a cold one is not while the budget is spent.
	if _, ok := b.admit(gone, small); ok {
		t.Fatal("a cold call was admitted past the budget")
	}
	b.observe("small", answerCharge(chunkingThreshold-1))
	if r, ok := b.admit(ctx, small); !ok || r != 0 {
		t.Fatalf("a small tool's call: reserved %d, admitted %v", r, ok)
	}
	// Every call ends: the budget holds nothing.
	for _, r := range reserved {
		b.adjust(r, 0)
	}
	if got := b.held.Load(); got != 0 {
		t.Fatalf("after every call ended the budget holds %d", got)
	}
	// Warm: a call reserves its tool's last answer, 3 MiB: five fit in 16 MiB.
	n := 0
	for {
		r, ok := b.admit(gone, big)
		if !ok {
			break
		}
		if r != answer {
			t.Fatalf("a warm call reserved %d, want %d", r, answer)
		}
		n++
	}
	if n != limit/answer {
		t.Fatalf("%d calls of 3 MiB admitted in 16 MiB, want %d", n, limit/answer)
	}
	b.adjust(int64(n)*answer, 0)
	// One answer larger than the whole budget is served, alone.
	b.observe("huge", 2*limit)
	huge := budgetTool(t, "huge")
	r, ok := b.admit(ctx, huge)
	if !ok || r != 2*limit {
		t.Fatalf("a call larger than the budget, alone: reserved %d, admitted %v", r, ok)
	}
	if _, ok := b.admit(gone, huge); ok {
		t.Fatal("a second call larger than the budget was admitted")
	}
	b.adjust(r, 0)
	if got := b.held.Load(); got != 0 {
		t.Fatalf("the budget holds %d", got)
	}
}

// TestAnswerBudgetEstimate: a tool's estimate is its largest recent answer,
// lowered by a sixteenth of the way by each smaller one; names no longer
// served are forgotten.
func TestAnswerBudgetEstimate(t *testing.T) {
	var s answerSizes
	if _, ok := s.estimate("t"); ok {
		t.Fatal("an estimate before any answer")
	}
	if !s.observe("t", 1600) {
		t.Fatal("the first answer is not reported as the first")
	}
	s.observe("t", 0)
	if est, _ := s.estimate("t"); est != 1500 {
		t.Fatalf("after a smaller answer the estimate is %d, want 1500", est)
	}
	s.observe("t", 4000)
	if est, _ := s.estimate("t"); est != 4000 {
		t.Fatalf("after a larger answer the estimate is %d, want 4000", est)
	}
	set, err := toolrun.NewSet(budgetTool(t, "u"))
	if err != nil {
		t.Fatal(err)
	}
	s.observe("u", 1)
	s.keep(set)
	if _, ok := s.estimate("t"); ok {
		t.Error("a tool no longer served kept its estimate")
	}
	if _, ok := s.estimate("u"); !ok {
		t.Error("a tool still served lost its estimate")
	}
}

// TestAnswerBudgetWaits: a call the budget cannot take waits for room and
// is admitted when an answer is given back; a cold call waits for its
// tool's first answer, and then reserves what it said.
func TestAnswerBudgetWaits(t *testing.T) {
	const limit = 1 << 20
	b := newAnswerBudget(limit)
	b.wait = time.Hour // only room made ends a wait here
	ctx := context.Background()
	tool := budgetTool(t, "t")
	b.observe("t", limit)
	r, ok := b.admit(ctx, tool)
	if !ok {
		t.Fatal("the first call was refused")
	}
	done := make(chan int64)
	go func() {
		r, ok := b.admit(ctx, tool)
		if !ok {
			r = -1
		}
		done <- r
	}()
	for b.waiters.Load() == 0 {
		time.Sleep(time.Millisecond) // until the second call waits
	}
	b.adjust(r, 0)
	if got := <-done; got != limit {
		t.Fatalf("the waiting call: reserved %d, want %d", got, limit)
	}
	b.adjust(limit, 0)

	// Cold calls past the budget wait for the tool's first answer.
	cold := budgetTool(t, "cold")
	var held []int64
	for range coldShare {
		r, _ := b.admit(ctx, cold)
		held = append(held, r)
	}
	go func() {
		r, ok := b.admit(ctx, cold)
		if !ok {
			r = -1
		}
		done <- r
	}()
	for b.waiters.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.observe("cold", 0) // the first answer: small
	if got := <-done; got != 0 {
		t.Fatalf("the cold call that waited: reserved %d, want 0", got)
	}
	for _, r := range held {
		b.adjust(r, 0)
	}
	if got := b.held.Load(); got != 0 {
		t.Fatalf("the budget holds %d", got)
	}

	// A cold tool whose first calls do not answer within its deadline, or
	// ask their clients, is taken as one of small answers.
	slow := budgetTool(t, "slow", toolrun.WithDeadline(time.Millisecond))
	b.wait = 0
	held = held[:0]
	for range coldShare {
		r, _ := b.admit(ctx, slow)
		held = append(held, r)
	}
	if r, ok := b.admit(ctx, slow); !ok || r != 0 {
		t.Fatalf("a slow cold tool's call past the cold share: reserved %d, admitted %v", r, ok)
	}
	if est, ok := b.sizes.estimate("slow"); !ok || est != 0 {
		t.Fatalf("a slow cold tool's estimate: %d, %v", est, ok)
	}
	for _, r := range held {
		b.adjust(r, 0)
	}
	b.wait = time.Hour
	asks := budgetTool(t, "asks")
	held = held[:0]
	for range coldShare {
		r, _ := b.admit(ctx, asks)
		held = append(held, r)
	}
	go func() {
		r, ok := b.admit(ctx, asks)
		if !ok {
			r = -1
		}
		done <- r
	}()
	for b.waiters.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.asked("asks")
	if got := <-done; got != 0 {
		t.Fatalf("a call of a cold tool that asks its client: reserved %d, want 0", got)
	}
	for _, r := range held {
		b.adjust(r, 0)
	}

	// The client going away ends a wait.
	b.observe("t", limit)
	r, _ = b.admit(ctx, tool)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := b.admit(gone, tool); ok {
		t.Fatal("a call whose client went away was admitted past the budget")
	}

	// A server that stops admitting ends the waits.
	go func() {
		r, ok := b.admit(ctx, tool)
		if !ok {
			r = -1
		}
		done <- r
	}()
	for b.waiters.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	b.stop()
	if got := <-done; got != -1 {
		t.Fatalf("a call waiting when the server stopped admitting: reserved %d", got)
	}
	b.adjust(r, 0)
	if got := b.held.Load(); got != 0 {
		t.Fatalf("the budget holds %d", got)
	}
}
