package actors

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// toolContext is the context a tool runs under: the request's context
// bounded by the tool's deadline, built without a timer.
//
// context.WithTimeout costs a timer, a cancelCtx registered with its parent
// and a done channel, each allocated on every call, and most tools never
// wait on Done (they compute, or poll Err). So Deadline and Err answer
// from the clock, and the first call to Done — a tool that selects on it,
// or derives a context for an outbound call — builds the real timer
// context, to which everything is delegated from then on. Either way the
// tool sees one context with one deadline; the call's watchdog (see
// watchdog) answers for a tool that ignores it.
//
// It lives inside Call, so it costs no allocation of its own.
type toolContext struct {
	parent   context.Context
	deadline time.Time
	// call and round serve the call's multi-round-trip Round under the
	// keys of toolrun.RoundKey, without a context.WithValue: the Round is
	// made on the first ask for it, from the call's request, since most
	// tools never ask; a retry sets it up front (setRound). call also
	// answers toolrun.AskClientKey.
	call  *Call
	round atomic.Pointer[toolrun.Round]

	mu       sync.Mutex // serializes building the timer context
	timed    atomic.Pointer[timedContext]
	released atomic.Bool // the call is over
}

// timedContext is the real context, made on demand: the parent, through a
// layer that a shutdown cancels with its cause (cut), bounded by the
// deadline.
type timedContext struct {
	ctx    context.Context
	cancel context.CancelFunc
	cut    context.CancelCauseFunc
}

var _ context.Context = (*toolContext)(nil)

// init bounds parent by d from now.
func (c *toolContext) init(parent context.Context, d time.Duration) {
	c.parent = parent
	c.deadline = time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(c.deadline) {
		c.deadline = pd
	}
}

// Deadline implements context.Context.
func (c *toolContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done implements context.Context; the first call builds the timer context.
func (c *toolContext) Done() <-chan struct{} { return c.materialize().Done() }

// Err implements context.Context. Past the deadline, or once the call is
// over, it builds the timer context (already ended, so no timer runs), so
// that Cause and Value then agree with Err.
func (c *toolContext) Err() error {
	if t := c.timed.Load(); t != nil {
		return t.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !c.released.Load() && time.Now().Before(c.deadline) {
		return nil
	}
	return c.materialize().Err()
}

// Value implements context.Context. The call's Round is answered here.
// Otherwise, once the timer context exists it answers, so that
// context.Cause and the children a tool derives find the cancelCtx that
// really closes Done.
func (c *toolContext) Value(key any) any {
	switch key.(type) {
	case toolrun.RoundKey:
		return c.roundFor(true)
	case toolrun.RoundMadeKey:
		return c.roundFor(false)
	case toolrun.AskClientKey:
		return c.asker()
	case toolrun.RequestKey:
		// Once the call is over, its request's buffers are the HTTP
		// edge's again (Call.Request): a goroutine the tool left running
		// gets no request, as outside a call.
		if c.call == nil || c.released.Load() {
			return (*wire.Request)(nil)
		}
		return c.call.Request
	}
	if t := c.timed.Load(); t != nil {
		return t.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// roundFor returns the call's Round, making it if create is set and there
// is none yet (nil otherwise). Handler goroutines may race to make it: one
// wins, and all get the winner's. Once the call is over there is none, as
// outside a call: a Round is made from the request and holds slices of its
// body, whose buffers another request may be using by then (Call.Request).
func (c *toolContext) roundFor(create bool) *toolrun.Round {
	if c.released.Load() {
		return nil
	}
	if r := c.round.Load(); r != nil || !create || c.call == nil {
		return r
	}
	c.round.CompareAndSwap(nil, &toolrun.Round{Capabilities: c.call.Request.Meta.ClientCapabilities})
	return c.round.Load()
}

// asker returns the call's toolrun.AskClient: the HTTP edge's writer asks
// a 2025-era client on the call's stream (relay.go); nil for any other
// call.
func (c *toolContext) asker() toolrun.AskClient {
	if c.call == nil || !c.call.AskClient {
		return nil
	}
	client, ok := c.call.Late.(ClientRequester)
	if !ok {
		return nil
	}
	return client.RequestClient
}

// setRound installs r, the Round of a retry, before the tool runs.
func (c *toolContext) setRound(r *toolrun.Round) { c.round.Store(r) }

// String names the context in panics and logs.
func (c *toolContext) String() string { return "wymcp.toolContext" }

// materialize returns the timer context, building it once.
func (c *toolContext) materialize() context.Context {
	if t := c.timed.Load(); t != nil {
		return t.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.timed.Load(); t != nil {
		return t.ctx
	}
	// The deadline's layer is a child of the cut's: a deadline hit still
	// reads context.DeadlineExceeded from Err (toolrun.Tool.Call tells a
	// deadline from a cancellation by it), and a cut reaches it with its
	// cause.
	cuttable, cut := context.WithCancelCause(c.parent)
	ctx, cancel := context.WithDeadline(cuttable, c.deadline)
	if c.released.Load() {
		// A tool still running after its call was answered (it ignored its
		// deadline, or the client left) asks for Done: it is over.
		cancel()
	}
	c.timed.Store(&timedContext{ctx: ctx, cancel: cancel, cut: cut})
	return ctx
}

// cut ends the context with cause, as a shutdown does to the calls it cuts
// short (System.Cut): Err says context.Canceled, context.Cause says cause.
func (c *toolContext) cut(cause error) {
	c.materialize()
	c.timed.Load().cut(cause)
}

// release ends the context when the call is over: its timer, if one was
// built, is stopped and Done closes, as a WithTimeout's cancel would.
func (c *toolContext) release() {
	c.mu.Lock()
	c.released.Store(true)
	t := c.timed.Load()
	c.mu.Unlock()
	if t != nil {
		t.cancel()
		t.cut(nil)
	}
}
