package actors

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/tools"
)

// Call is the message a method actor receives: one request, where its
// answer goes, and the context its work runs under.
type Call struct {
	// Ctx is cancelled when the client goes away; a tool's context derives
	// from it.
	Ctx context.Context
	// Request is the request, its params and `_meta` already validated.
	Request *wire.Request
	// Tool is the tool a tools/call names, nil when unknown.
	Tool *tools.Tool
	// Op records the request's span; faults are recorded on it.
	Op *telemetry.Op

	// Late, when set, is also given the watchdog's answer for a tool that
	// ignores its deadline: a tools/call runs on the requester's goroutine,
	// which cannot take that answer from Ask before the tool returns.
	Late LateWriter

	// The answer: claimed once (answered), then published under mu, which
	// also guards wake, made only for a requester that has to wait.
	answered atomic.Bool
	mu       sync.Mutex
	ready    bool
	result   Answer
	wake     chan struct{}

	// tctx is the tool's context, once Ask has bounded Ctx by the tool's
	// deadline; prev, next, due, watched and shard belong to the watchdog.
	tctx       toolContext
	prev, next *Call
	due        time.Time
	watched    bool
	shard      uint8
}

// LateWriter writes an answer that the requester's goroutine cannot, being
// busy running the tool: the transport's, which serializes it with its own
// writes and writes nothing once the request is over.
type LateWriter interface {
	WriteLate(Answer)
}

// StreamProgress makes the call's tool report progress: each report becomes
// a notifications/progress message for token, handed to send on the
// reporting goroutine (the tool's; send serializes), so that reports made
// before the tool returns precede its answer and a tool reporting faster
// than the client reads waits for it. It must be called before Ask.
func (c *Call) StreamProgress(token wire.RawJSON, send func(notification []byte)) {
	c.Ctx = tools.WithProgress(c.Ctx, func(progress float64, total *float64, message string) {
		b, err := wire.ProgressNotification(token, progress, total, message)
		if err != nil {
			return
		}
		send(b)
	})
}

// NewCall returns a Call ready to be asked.
func NewCall(ctx context.Context, req *wire.Request, tool *tools.Tool, op *telemetry.Op) *Call {
	return &Call{Ctx: ctx, Request: req, Tool: tool, Op: op}
}

// answer delivers a, unless the call was answered already: exactly one
// answer reaches the requester, whether it comes from the method, from the
// containment strategy, or from the deadline backstop. It never blocks.
//
// There is no reply channel: the method almost always answers on the
// requester's own goroutine (see System.New), where a channel would cost an
// allocation and a send and a receive for nothing. A requester that must
// wait makes one (await).
func (c *Call) answer(a Answer) bool {
	if !c.answered.CompareAndSwap(false, true) {
		return false
	}
	c.mu.Lock()
	c.result, c.ready = a, true
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		close(wake)
	}
	return true
}

// await returns the call's answer, waiting for it until done is closed;
// false when done was first.
func (c *Call) await(done <-chan struct{}) (Answer, bool) {
	c.mu.Lock()
	if c.ready {
		a := c.result
		c.mu.Unlock()
		return a, true
	}
	if c.wake == nil {
		c.wake = make(chan struct{})
	}
	wake := c.wake
	c.mu.Unlock()
	select {
	case <-wake:
		c.mu.Lock()
		a := c.result
		c.mu.Unlock()
		return a, true
	case <-done:
		return Answer{}, false
	}
}
