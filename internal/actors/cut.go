package actors

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// The cut: how a shutdown that ran out of time still answers every call
// it admitted (docs/design.md §4, §6a). A tool runs on its request's
// goroutine and Go cannot stop it from outside, so a call still running
// when the shutdown's time is up is answered for it, as the watchdog
// answers a tool that overran its deadline: an isError result with a fixed
// text, written through the edge's LateWriter (the JSON body, or the last
// event of the call's stream), while its tool's context is cancelled with
// errShutdown for a tool that honours it to stop.

// cutText is the whole text of the answer to a call cut short.
const cutText = "The call was cut short: the server is shutting down"

// errShutdown is the cause a cut call's tool context is cancelled with
// (context.Cause).
var errShutdown = errors.New("wymcp: the server is shutting down")

// cutOutcome is the outcome of a call cut short: a tool error, like a
// deadline hit, since the tool did not finish.
func cutOutcome() toolrun.Outcome {
	return toolrun.Outcome{Result: protocol.ErrorResult(cutText), Kind: toolrun.OutcomeToolError}
}

// Cut answers every tools/call still running with the cut's answer,
// cancels its tool's context with errShutdown, and returns once those
// answers are written (each under the write deadline) with how many it
// answered. A call that reaches its tool afterwards is answered the same
// way without running it (Ask). Cut is for a shutdown whose time is up,
// after the front has stopped admitting: the server answers nothing else
// from then on. It may be called more than once.
func (s *System) Cut() int {
	s.cutMu.Lock()
	defer s.cutMu.Unlock()
	s.cutting.Store(true)
	n := 0
	for _, c := range s.watchdog.takeAll() {
		if s.taken != nil {
			s.taken(c)
		}
		// Answer first, then cancel: a tool that returns on the
		// cancellation must find its call answered, or its "request
		// cancelled" would be the answer.
		if s.answerLate(c, s.cutFor(c)) {
			n++
		}
		c.tctx.cut(errShutdown)
	}
	s.late.wait()
	if n > 0 {
		s.logger.Warn("wymcp: shutdown time is up: calls still running were answered as cut short", slog.Int("calls", n))
	}
	return n
}

// answerLate settles c with r and, when r is its reply, has the edge write
// it at once, on a goroutine of its own (a client that does not read holds
// a write up to the write deadline, and the caller answers for other calls
// too), counted in s.late so that Cut waits for it. It reports whether r
// was c's reply.
func (s *System) answerLate(c *Call, r Reply) bool {
	if !c.settle(r) {
		return false
	}
	if c.Late == nil {
		return true
	}
	s.late.add()
	go func() {
		defer s.late.done()
		defer func() {
			if p := recover(); p != nil {
				s.lateFault(p)
			}
		}()
		c.Late.WriteLate(r)
	}()
	return true
}

// lateWrites counts the answers being written by answerLate.
type lateWrites struct {
	mu sync.Mutex
	n  int
	// idle is closed when n returns to 0; made when n leaves it.
	idle chan struct{}
}

func (l *lateWrites) add() {
	l.mu.Lock()
	if l.n == 0 {
		l.idle = make(chan struct{})
	}
	l.n++
	l.mu.Unlock()
}

func (l *lateWrites) done() {
	l.mu.Lock()
	l.n--
	if l.n == 0 {
		close(l.idle)
	}
	l.mu.Unlock()
}

// wait returns once the writes in progress at its call are done.
func (l *lateWrites) wait() {
	l.mu.Lock()
	n, idle := l.n, l.idle
	l.mu.Unlock()
	if n > 0 {
		<-idle
	}
}

// cutFor is the cut's answer to c, in its era's shape. Its era is the one
// Ask kept (Call.legacy): once the watchdog has let go of c, its requester
// may have returned, and its request's buffers hold another request.
func (s *System) cutFor(c *Call) Reply {
	if c.legacy {
		return s.cutLegacy
	}
	return s.cutReply
}
