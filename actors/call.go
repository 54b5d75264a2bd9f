package actors

import (
	"context"
	"sync/atomic"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/telemetry"
	"github.com/wymcp/wymcp/tools"
)

// Call is the message a method actor receives: one request, where its
// answer goes, and the context its work runs under.
type Call struct {
	// Ctx is cancelled when the client goes away; a tool's context derives
	// from it.
	Ctx context.Context
	// Request is the request, its params and `_meta` already validated.
	Request *protocol.Request
	// Tool is the tool a tools/call names, nil when unknown.
	Tool *tools.Tool
	// Op records the request's span; faults are recorded on it.
	Op *telemetry.Op

	reply    chan Answer
	answered atomic.Bool
	// progress carries notifications/progress messages from the tool to
	// onProgress, which Ask runs on the requester's goroutine; nil when the
	// request did not ask for progress or cannot receive it.
	progress   chan []byte
	onProgress func([]byte)
}

// StreamProgress makes the call's tool report progress: each report becomes
// a notifications/progress message for token, handed to send on the
// goroutine that waits in Ask, in order. A tool that reports faster than
// send drains waits for it (the stream's back-pressure), never longer than
// the call's context lives. It must be called before Ask.
func (c *Call) StreamProgress(token protocol.RawJSON, send func(notification []byte)) {
	c.progress = make(chan []byte, 16)
	c.onProgress = send
	ctx := c.Ctx
	c.Ctx = tools.WithProgress(ctx, func(progress float64, total *float64, message string) {
		b, err := protocol.ProgressNotification(token, progress, total, message)
		if err != nil {
			return
		}
		select {
		case c.progress <- b:
		case <-ctx.Done():
		}
	})
}

// NewCall returns a Call ready to be asked.
func NewCall(ctx context.Context, req *protocol.Request, tool *tools.Tool, op *telemetry.Op) *Call {
	return &Call{Ctx: ctx, Request: req, Tool: tool, Op: op, reply: make(chan Answer, 1)}
}

// answer delivers a, unless the call was answered already: exactly one
// answer reaches the requester, whether it comes from the method, from the
// containment strategy, or from the deadline backstop. It never blocks.
func (c *Call) answer(a Answer) bool {
	if !c.answered.CompareAndSwap(false, true) {
		return false
	}
	c.reply <- a
	return true
}
