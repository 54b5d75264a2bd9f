package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// lateRecorder is a LateWriter that keeps what it was given.
type lateRecorder struct {
	mu      sync.Mutex
	replies []Reply
}

func (l *lateRecorder) WriteLate(r Reply) {
	l.mu.Lock()
	l.replies = append(l.replies, r)
	l.mu.Unlock()
}

func (l *lateRecorder) got() []Reply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Reply(nil), l.replies...)
}

// isCutReply reports whether r is the cut's answer: an isError result
// with the fixed text.
func isCutReply(r Reply) bool {
	return r.Err == nil && r.ToolError && strings.Contains(string(r.Result), `"text":"`+cutText+`"`) &&
		strings.Contains(string(r.Result), `"isError":true`)
}

// TestCutAnswersCallsRunning: Cut answers each tools/call still running
// through its LateWriter — one that ignores its context and one that
// honours it — cancels their tools' contexts with errShutdown after
// answering (so the tool's own "cancelled" is not the answer), and
// returns once the answers are written; a call that reaches Ask after the
// cut is answered the same way without running its tool.
func TestCutAnswersCallsRunning(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	var mu sync.Mutex
	causes := map[int64]error{}
	ran := 0
	// Call 1's handler ignores its context, call 2's honours it.
	tool := rawTool("t", func(ctx context.Context, args []byte) (*protocol.CallToolResult, error) {
		id := argID(args)
		mu.Lock()
		ran++
		mu.Unlock()
		started <- struct{}{}
		if id == 1 {
			<-release // ignores its context
		} else {
			<-ctx.Done()
		}
		mu.Lock()
		causes[id] = context.Cause(ctx)
		mu.Unlock()
		return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: json.RawMessage(`{"own":true}`)}, nil
	}, toolrun.WithDeadline(time.Minute))
	s := newTestSystem(t, tool)
	type asked struct {
		r   Reply
		err error
	}
	lates := []*lateRecorder{{}, {}}
	replies := make(chan asked, 2)
	for i, late := range lates {
		call := toolCall(context.Background(), tool, int64(i+1))
		call.Late = late
		go func() {
			r, err := s.Ask(call)
			replies <- asked{r, err}
		}()
	}
	<-started
	<-started

	if n := s.Cut(); n != 2 {
		t.Errorf("Cut answered %d calls, want 2", n)
	}
	// Cut returns once the answers are written: no waiting here.
	for i, late := range lates {
		if got := late.got(); len(got) != 1 || !isCutReply(got[0]) {
			t.Errorf("call %d: late answers %+v, want the cut's one", i+1, got)
		}
	}
	// The call that honours its context returns at once, with the cut's
	// answer, not its own.
	if a := <-replies; a.err != nil || !isCutReply(a.r) {
		t.Errorf("Ask of the call that honours its context = %s, %v; want the cut's answer", a.r.Result, a.err)
	}
	close(release)
	if a := <-replies; a.err != nil || !isCutReply(a.r) {
		t.Errorf("Ask of the call that ignored its context = %s, %v; want the cut's answer", a.r.Result, a.err)
	}
	mu.Lock()
	if !errors.Is(causes[2], errShutdown) {
		t.Errorf("the cut tool's context.Cause = %v, want errShutdown", causes[2])
	}
	mu.Unlock()

	r, err := s.Ask(toolCall(context.Background(), tool, 3))
	if err != nil || !isCutReply(r) {
		t.Errorf("Ask after the cut = %s, %v; want the cut's answer", r.Result, err)
	}
	mu.Lock()
	if ran != 2 {
		t.Errorf("%d tools ran, want 2: none after the cut", ran)
	}
	mu.Unlock()
	if n := s.Cut(); n != 0 {
		t.Errorf("a second Cut answered %d calls, want 0", n)
	}
}

// TestToolContextCut: a cut ends the tool's context, before or after the
// tool asked for Done, with context.Canceled and errShutdown as the cause,
// and reaches the contexts the tool derived.
func TestToolContextCut(t *testing.T) {
	t.Parallel()
	for _, asked := range []bool{false, true} {
		var c toolContext
		c.init(context.Background(), time.Minute)
		var child context.Context = &c
		if asked {
			var stop context.CancelFunc
			child, stop = context.WithCancel(&c)
			defer stop()
		}
		c.cut(errShutdown)
		select {
		case <-child.Done():
		default:
			t.Fatalf("Done asked before the cut %v: still open after it", asked)
		}
		if !errors.Is(c.Err(), context.Canceled) || !errors.Is(context.Cause(&c), errShutdown) || !errors.Is(context.Cause(child), errShutdown) {
			t.Errorf("Done asked before the cut %v: Err %v, Cause %v, child's Cause %v", asked, c.Err(), context.Cause(&c), context.Cause(child))
		}
		c.release()
	}
}
