package actors

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// Call is the message a method actor receives: one request, the context its
// work runs under, and a slot for its reply.
type Call struct {
	// Ctx is cancelled when the client goes away; a tool's context derives
	// from it.
	Ctx context.Context
	// Request is the request, its params and `_meta` already validated.
	// It and every RawJSON in it live in the requester's buffers, which the
	// HTTP edge reuses for its next request once Ask has returned: only the
	// requester's goroutine reads it, while Ask runs. A late path (the
	// watchdog, the cut, the writes they start) may hold the Call past
	// that, so it reads only what Ask copied into the Call (legacy) and the
	// fields the edge owns (Tool, Late): see lateReply.
	Request *wire.Request
	// Tool is the tool a tools/call names, nil when unknown.
	Tool *toolrun.Tool
	// Op records the request's span; faults are recorded on it.
	Op *telemetry.Op
	// Late, when set, is given the reply for a tool that ignores its
	// deadline, from the watchdog's goroutine: the tool runs on the
	// requester's goroutine, which cannot return it from Ask before the
	// tool returns. The HTTP edge writes it.
	Late LateWriter

	// The reply: claimed once (settled), then published under mu, which
	// also guards wake, made only for a requester that has to wait.
	settled atomic.Bool
	mu      sync.Mutex
	ready   bool
	reply   Reply
	wake    chan struct{}
	// tctx is the tool's context, once Ask has bounded Ctx by the tool's
	// deadline; prev, next, watched and shard belong to the watchdog.
	tctx       toolContext
	prev, next *Call
	watched    bool
	shard      uint8
	// legacy reports a 2025-era call, set by Ask before the call is
	// watched: the late paths answer in the call's era from it, never from
	// Request (see Request).
	legacy bool
	// AskClient reports that Late, the HTTP edge's writer, can also send a
	// 2025-era call's requests to its client on the call's stream
	// (relay.go). A flag beside the watchdog's, not another field of
	// interface type: a Call lives in every request's one allocation.
	AskClient bool
}

// LateWriter is the HTTP edge's writer of a reply that Ask cannot return
// in time (an interface, not a func: a method value would cost the
// request an allocation).
type LateWriter interface {
	WriteLate(Reply)
}

// settle keeps r as the call's reply, unless it has one already: exactly
// one reply reaches the requester, whether it comes from the method, from
// the containment strategy, or from the watchdog. It never blocks, and it
// reports whether r was kept.
//
// There is no reply channel: the method almost always answers on the
// requester's own goroutine (see New), where a channel would cost an
// allocation and a send and a receive for nothing. A requester that must
// wait makes one (wait).
func (c *Call) settle(r Reply) bool {
	if !c.settled.CompareAndSwap(false, true) {
		return false
	}
	c.mu.Lock()
	c.reply, c.ready = r, true
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		close(wake)
	}
	return true
}

// wait returns the call's reply, waiting for it until done is closed;
// false when done was first.
func (c *Call) wait(done <-chan struct{}) (Reply, bool) {
	c.mu.Lock()
	if c.ready {
		r := c.reply
		c.mu.Unlock()
		return r, true
	}
	if c.wake == nil {
		c.wake = make(chan struct{})
	}
	wake := c.wake
	c.mu.Unlock()
	select {
	case <-wake:
		c.mu.Lock()
		r := c.reply
		c.mu.Unlock()
		return r, true
	case <-done:
		return Reply{}, false
	}
}
