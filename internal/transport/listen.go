package transport

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// A listen stream (subscriptions/listen, docs/design.md §5a) is the answer
// to one request that stays open: an SSE stream on which the server tells
// the client that tools/list may answer otherwise, until the client leaves
// or a drain ends it. It lives beside the calls, not among them:
//
//   - It holds no in-flight place (MaxInFlight bounds calls, and a stream
//     is idle nearly all its life); it is bounded by a limit of its own,
//     in total and per caller (listenHub.admit), refused past them with the
//     answers of docs/design.md §5.
//   - What it may hold unsent, one of each of its frames at most (a change
//     is a flag, not a queue: listenStream.changed), is charged to the
//     answer budget (answers.go) for its life.
//   - Each frame is written under the write deadline: a client that stops
//     reading loses its stream when a frame cannot be written in time,
//     and nothing else waits for it (SetTools only sets a flag).
//   - A keep-alive comment goes out whenever nothing else has for
//     keepAlive, well inside a proxy's read timeout (deploy/nginx: 75 s).
//   - A drain ends every stream with the request's result (the graceful
//     end, SEP-2575), from the drain's first moment: the connection then
//     carries at most one more request, which the lame duck answers with
//     "Connection: close", and the client listens again elsewhere. A
//     stream opened during a drain is acknowledged and ended at once.
//     Shutdown waits for the streams as it waits for the calls.

// The listen streams' defaults (docs/design.md §5a).
const (
	// listenKeepAlive: a third of nginx's default proxy_read_timeout
	// (deploy/nginx sets 75 s), so that two keep-alives may be late and the
	// proxy still sees bytes in time.
	listenKeepAlive = 25 * time.Second
	// listenCoalesce is the least time between two list_changed frames of
	// one stream: a burst of changes (a gateway whose upstreams all
	// refresh at once) becomes at most one frame per interval, and the
	// client lists once, not once per change; a change is still told
	// within a second.
	listenCoalesce = 250 * time.Millisecond
)

// keepAliveFrame is the SSE comment a stream sends when it has been quiet
// for keepAlive: clients ignore it, proxies see the connection in use.
const keepAliveFrame = ": keep-alive\n\n"

var (
	// rejListenTotal: the server holds as many streams as it may.
	rejListenTotal = reject(StageOverload, http.StatusServiceUnavailable,
		wire.Errorf(wire.CodeInternalError, "Server busy: too many listen streams; retry later")).with("Retry-After", retryAfterSeconds)
	// rejListenCaller: this caller holds as many streams as one may; it
	// must close one first, so no Retry-After promises otherwise.
	rejListenCaller = reject(StageOverload, http.StatusTooManyRequests,
		wire.Errorf(wire.CodeInternalError, "Too many listen streams from this caller: close one first"))
	// rejListenAccept: a stream is an SSE answer, which the client's Accept
	// must admit.
	rejListenAccept = reject(StageWire, http.StatusNotAcceptable,
		errWire("Not Acceptable: subscriptions/listen is answered with text/event-stream, which Accept must admit"))
)

// listenTypes are the media ranges that admit a listen stream.
var listenTypes = []string{"text/event-stream", "text/*", "*/*"}

// listenHub is the server's open listen streams.
type listenHub struct {
	// max and perCaller bound the streams, in total and per caller; 0 is
	// no bound.
	max, perCaller int
	// serverMeta is the result _meta naming the server, which a stream's
	// graceful result extends with its id.
	serverMeta wire.RawJSON
	// keepAlive and coalesce are listenKeepAlive and listenCoalesce, as
	// nanoseconds (tests shorten them: SetListenTiming).
	keepAlive, coalesce atomic.Int64

	mu       sync.Mutex
	open     map[*listenStream]struct{}
	byCaller map[string]int
	// ending: a drain has begun; every stream ends (listenStream.end).
	ending bool
}

// listenStream is one open stream, as the hub knows it.
type listenStream struct {
	caller string
	// changed holds one mark when the tool set changed since the stream
	// last said so: a flag, never a queue, so SetTools never waits.
	changed chan struct{}
	// end is closed when the server ends the stream (a drain).
	end chan struct{}
}

func newListenHub(max, perCaller int, serverMeta wire.RawJSON) *listenHub {
	l := &listenHub{max: max, perCaller: perCaller, serverMeta: serverMeta,
		open: map[*listenStream]struct{}{}, byCaller: map[string]int{}}
	l.keepAlive.Store(int64(listenKeepAlive))
	l.coalesce.Store(int64(listenCoalesce))
	return l
}

// SetListenTiming sets the keep-alive interval and the least gap between
// two list_changed frames of the streams opened from now on: tests shorten
// them. It does nothing on a server that serves no stream.
func (h *Handler) SetListenTiming(keepAlive, coalesce time.Duration) {
	if h.listens != nil {
		h.listens.keepAlive.Store(int64(keepAlive))
		h.listens.coalesce.Store(int64(coalesce))
	}
}

// admit opens a stream for caller, or returns the refusal past a limit.
func (l *listenHub) admit(caller string) (*listenStream, *rejection) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// The caller's own bound first: a caller at it is told it is the
	// cause, whatever the others hold.
	if l.perCaller > 0 && l.byCaller[caller] >= l.perCaller {
		return nil, rejListenCaller
	}
	if l.max > 0 && len(l.open) >= l.max {
		return nil, rejListenTotal
	}
	st := &listenStream{caller: caller, changed: make(chan struct{}, 1), end: make(chan struct{})}
	l.open[st] = struct{}{}
	l.byCaller[caller]++
	if l.ending {
		close(st.end)
	}
	return st, nil
}

// remove forgets st.
func (l *listenHub) remove(st *listenStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.open, st)
	if l.byCaller[st.caller]--; l.byCaller[st.caller] <= 0 {
		delete(l.byCaller, st.caller)
	}
}

// changed marks every open stream: the tool set changed. It never waits
// for a stream.
func (l *listenHub) changed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for st := range l.open {
		select {
		case st.changed <- struct{}{}:
		default: // already marked: the change is told once
		}
	}
}

// endAll ends every stream, now and from now on (a drain). It may be
// called more than once.
func (l *listenHub) endAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ending {
		return
	}
	l.ending = true
	for st := range l.open {
		close(st.end)
	}
}

// serveListen answers a subscriptions/listen request (stage 7 for a
// stream): its filter, the stream's admission, then the stream itself.
// params are the request's params as sent; in is given up before the
// stream begins (shed).
func (h *Handler) serveListen(ctx context.Context, w http.ResponseWriter, r *http.Request, in *inbound, op *telemetry.Op, req *wire.Request, params wire.RawJSON) {
	id := req.ID
	filter, perr := wire.ParseListenFilter(params)
	if perr != nil {
		// A method's own -32602, answered as tools/call's are (§5).
		h.writeAnswer(w, http.StatusOK, errorEnvelope(id, perr))
		op.End(r.Context(), perr.Code, false)
		return
	}
	if accept := r.Header["Accept"]; len(accept) > 0 && !accepts(accept, listenTypes) {
		h.writeRejection(w, r, op, id, rejListenAccept)
		return
	}
	if !h.enterListen() {
		h.writeRejection(w, r, op, id, rejClosing)
		return
	}
	defer h.leaveListen()
	st, rej := h.listens.admit(h.callerKey(ctx, r))
	if rej != nil {
		h.writeRejection(w, r, op, id, rej)
		return
	}
	defer h.listens.remove(st)
	frames := wire.NewListenFrames(id.JSON(), filter, h.listens.serverMeta)
	charge, ok := h.answers.hold(listenCharge(frames))
	if !ok {
		h.writeRejection(w, r, op, id, rejAnswerBudget)
		return
	}
	defer h.answers.adjust(charge, 0)
	// The stream needs nothing of the body from here on (frames and id
	// are copies): its buffer and its share of the body budget go back
	// now, not when the stream ends.
	h.shed(in)
	changed := st.changed
	if !filter.ToolsListChanged {
		// Nothing else is honoured: the stream carries its ack, its
		// keep-alives and, at a drain, its result.
		changed = nil
	}
	// A stream outlives no credential: it ends, with its result, when
	// the caller's token expires, and the client listens again with a
	// fresh one (whose scopes may differ).
	var expiry <-chan time.Time
	if c := caller.IdentityFrom(ctx); c != nil && !c.Expiry.IsZero() {
		t := time.NewTimer(time.Until(c.Expiry))
		defer t.Stop()
		expiry = t.C
	}
	h.stream(ctx, w, st, id, frames, changed, expiry)
	op.End(context.WithoutCancel(ctx), 0, false)
}

// listenCharge is what a stream holds of the answer budget: one of each of
// its frames, the most it can have written and not yet sent.
func listenCharge(f wire.ListenFrames) int64 {
	framing := 3 * (len(sseHead) + len(sseTail))
	return int64(len(f.Ack) + len(f.ToolsChanged) + len(resultHead) + len(f.Result) + 64 + len(keepAliveFrame) + framing)
}

// stream writes the stream: its headers and ack, then a list_changed frame
// for each change (at most one per coalesce interval), a keep-alive comment
// when quiet, and the result when the server ends it. It returns when the
// stream ends: the server ended it, the client left, or a frame could not
// be written in time.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, st *listenStream, id wire.ID, frames wire.ListenFrames, changed <-chan struct{}, expiry <-chan time.Time) {
	hdr := w.Header()
	hdr["Content-Type"] = []string{"text/event-stream"}
	// As startSSE's: no proxy may buffer or transform the stream.
	hdr["Cache-Control"] = []string{"no-cache, no-transform"}
	hdr["X-Accel-Buffering"] = []string{"no"}
	h.closeIfDraining(hdr)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if h.listenFrame(w, rc, func(w io.Writer) { writeEvent(w, frames.Ack) }) != nil {
		return
	}
	keepAlive := time.Duration(h.listens.keepAlive.Load())
	coalesce := time.Duration(h.listens.coalesce.Load())
	idle := time.NewTimer(keepAlive)
	defer idle.Stop()
	// quiet, while set, holds the next list_changed back (coalesce).
	var quiet *time.Timer
	var quietC <-chan time.Time
	defer func() {
		if quiet != nil {
			quiet.Stop()
		}
	}()
	tell := changed
	for {
		var err error
		select {
		case <-ctx.Done():
			return // the client left: no result (an abrupt end)
		case <-expiry:
			// As at a drain, but the connection stays open: the client
			// listens again here, with a fresh token.
			h.endListen(w, rc, id, frames, tell)
			return
		case <-st.end:
			h.endListen(w, rc, id, frames, tell)
			return
		case <-tell:
			err = h.listenFrame(w, rc, func(w io.Writer) { writeEvent(w, frames.ToolsChanged) })
			tell = nil
			if quiet == nil {
				quiet = time.NewTimer(coalesce)
			} else {
				quiet.Reset(coalesce)
			}
			quietC = quiet.C
		case <-quietC:
			tell, quietC = changed, nil
			continue // nothing written: the idle timer runs on
		case <-idle.C:
			err = h.listenFrame(w, rc, func(w io.Writer) { _, _ = io.WriteString(w, keepAliveFrame) })
		}
		if err != nil {
			return // not written in time, or the connection is gone
		}
		idle.Reset(keepAlive)
	}
}

// endListen ends a stream gracefully: a change not told yet is told
// first, then the result, the stream's last word.
func (h *Handler) endListen(w http.ResponseWriter, rc *http.ResponseController, id wire.ID, frames wire.ListenFrames, tell <-chan struct{}) {
	select {
	case <-tell:
		if h.listenFrame(w, rc, func(w io.Writer) { writeEvent(w, frames.ToolsChanged) }) != nil {
			return
		}
	default:
	}
	e := envelope{id: id.JSON(), body: frames.Result}
	_ = h.listenFrame(w, rc, e.writeSSE)
}

// writeEvent writes msg as one SSE message event.
func writeEvent(w io.Writer, msg []byte) {
	_, _ = io.WriteString(w, sseHead)
	_, _ = w.Write(msg)
	_, _ = io.WriteString(w, sseTail)
}

// listenFrame writes one frame and flushes it, under the write deadline,
// then lifts the deadline (a stream is idle between frames). It returns
// the flush's error: the frame did not reach the connection in time, or
// the connection is gone.
func (h *Handler) listenFrame(w http.ResponseWriter, rc *http.ResponseController, write func(io.Writer)) error {
	if h.writeTime > 0 {
		_ = rc.SetWriteDeadline(time.Now().Add(h.writeTime))
		defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	}
	write(w)
	return rc.Flush()
}

// enterListen counts a stream in, unless the server no longer admits: the
// count first, then the flag, as enter does, so that StopAdmitting either
// sees the stream or the stream sees it stopping.
func (h *Handler) enterListen() bool {
	h.listening.Add(1)
	if h.closing.Load() {
		h.leaveListen()
		return false
	}
	return true
}

func (h *Handler) leaveListen() {
	if h.listening.Add(-1) == 0 && h.closing.Load() && h.inFlight.Load() == 0 {
		h.signalDrained()
	}
}

// shed gives back what in holds before the stream begins: its share of the
// body budget and its buffers, which a stream living for hours must not
// pin. ServeHTTP's release then pools what is left.
func (h *Handler) shed(in *inbound) {
	if in.held != 0 {
		h.bodyHeld.Add(-in.held)
		in.held = 0
	}
	in.body = nil
	in.scratch = wire.Scratch{}
}
