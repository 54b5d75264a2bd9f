package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// Config configures a Handler. Zero values are the documented defaults.
type Config struct {
	// System answers the methods. Required.
	System *actors.System
	// Observer records telemetry. Required.
	Observer *telemetry.Observer
	// MaxBodyBytes bounds a request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInFlight bounds the requests being answered at once; past it a
	// request is answered 503 at once, never queued. 0 means
	// DefaultMaxInFlight; negative means unbounded.
	MaxInFlight int
	// WriteTimeout bounds the sending of one answer (each frame of a
	// stream), not the method's work: a client that stops reading cannot
	// hold its place in the in-flight bound, nor a shutdown, for longer.
	// 0 means DefaultWriteTimeout; negative means no bound.
	WriteTimeout time.Duration
	// AllowedOrigins are browser origins (scheme://host[:port]) allowed
	// besides the loopback ones.
	AllowedOrigins []string
	// AllowedHosts are Host header values (with or without port) allowed
	// on a loopback listener besides the loopback names. Set on a server
	// bound elsewhere, it becomes the only hosts allowed.
	AllowedHosts []string
}

// Defaults of Config.
const (
	// DefaultMaxBodyBytes is 4 MiB, the limit of the TypeScript SDK.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultMaxInFlight is high enough that only a flood reaches it, low
	// enough that a flood cannot grow memory without bound.
	DefaultMaxInFlight = 4096
	// DefaultWriteTimeout is long enough for a 4 MiB answer over a slow
	// link, short enough that a stalled reader lets go of its place.
	DefaultWriteTimeout = 30 * time.Second
	// RetryAfterSeconds is the Retry-After of a 503.
	RetryAfterSeconds = "1"
)

// Handler is the MCP endpoint: an http.Handler for POSTs to one path.
type Handler struct {
	sys         *actors.System
	obs         *telemetry.Observer
	maxBody     int64
	maxInFlight int64
	writeTime   time.Duration
	origins     map[string]bool
	hosts       map[string]bool

	inFlight atomic.Int64
	closing  atomic.Bool
	// drained is signalled (under mu) when closing and in-flight reaches 0.
	mu      sync.Mutex
	drained chan struct{}
}

// New returns a Handler for cfg.
func New(cfg Config) *Handler {
	h := &Handler{
		sys:         cfg.System,
		obs:         cfg.Observer,
		maxBody:     cfg.MaxBodyBytes,
		maxInFlight: int64(cfg.MaxInFlight),
		writeTime:   cfg.WriteTimeout,
		origins:     map[string]bool{},
		hosts:       map[string]bool{},
		drained:     make(chan struct{}),
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.maxInFlight == 0 {
		h.maxInFlight = DefaultMaxInFlight
	}
	if h.writeTime == 0 {
		h.writeTime = DefaultWriteTimeout
	}
	for _, o := range cfg.AllowedOrigins {
		h.origins[o] = true
	}
	for _, host := range cfg.AllowedHosts {
		h.hosts[host] = true
	}
	return h
}

var (
	rejOverload = reject(StageOverload, http.StatusServiceUnavailable,
		wire.Errorf(wire.CodeInternalError, "Server busy: retry later")).with("Retry-After", RetryAfterSeconds)
	rejClosing = reject(StageOverload, http.StatusServiceUnavailable,
		wire.Errorf(wire.CodeInternalError, "Server shutting down: retry later")).with("Retry-After", RetryAfterSeconds).with("Connection", "close")
)

// ServeHTTP runs the request path of DESIGN §3.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Stage 1: the wire.
	if rej := h.checkWire(r); rej != nil {
		h.writeRejection(w, r, nil, wire.ID{}, rej)
		return
	}
	body, err := h.readBody(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.writeRejection(w, r, nil, wire.ID{}, rejTooLarge)
			return
		}
		// The body ended early (a chunked body cut off, a Content-Length
		// not met): what arrived is not a message. The client may be gone;
		// if it only half-closed, it reads why.
		h.writeRejection(w, r, nil, wire.ID{}, rejTruncated)
		return
	}
	// Stage 2: parse and classify.
	msg, id, perr := wire.Parse(body)
	if perr != nil {
		h.writeRejection(w, r, nil, id, reject(StageParse, http.StatusBadRequest, perr))
		return
	}
	// Stage 4: a notification never reaches a method (JSON-RPC forbids
	// answering it with an error; none means anything over HTTP here).
	if msg.Kind == wire.KindNotification {
		_, op := h.obs.Start(r.Context(), r, &msg, nil)
		w.WriteHeader(http.StatusAccepted)
		op.End(r.Context(), 0, false)
		return
	}
	// Stage 5: the protocol fields.
	req, perr := wire.ParseRequest(msg)
	var meta *wire.RequestMeta
	if req != nil {
		meta = &req.Meta
	}
	ctx, op := h.obs.Start(r.Context(), r, &msg, meta)
	if perr != nil {
		h.writeRejection(w, r, op, id, reject(StageProtocol, http.StatusBadRequest, perr))
		return
	}
	call := actors.NewCall(ctx, req, nil, op)
	if rej := h.checkFields(r, call); rej != nil {
		h.writeRejection(w, r, op, id, rej)
		return
	}
	// Stage 6: the method table.
	if !h.sys.HasMethod(req.Method) {
		h.writeRejection(w, r, op, id, reject(StageMethod, http.StatusNotFound, errMethodNotFound))
		return
	}
	// Stage 7: the method, within the in-flight bound.
	if !h.enter() {
		rej := rejOverload
		if h.closing.Load() {
			rej = rejClosing
		}
		h.writeRejection(w, r, op, id, rej)
		return
	}
	defer h.leave()
	if call.Tool == nil {
		// server/discover, tools/list, and a tools/call naming no tool.
		answer, err := h.sys.Ask(call)
		if err != nil {
			op.End(context.WithoutCancel(ctx), 0, false)
			return
		}
		// Stage 8: the send; after it only telemetry runs.
		h.writeAnswer(w, answer.Body)
		op.End(r.Context(), answer.Code, answer.ToolError)
		return
	}
	h.serveCall(ctx, w, r, call, op)
}

// serveCall runs a tools/call naming a tool and writes its answer through a
// responder: the tool runs on this goroutine, and progress reports and the
// watchdog's answer may come from others (see responder).
func (h *Handler) serveCall(ctx context.Context, w http.ResponseWriter, r *http.Request, call *actors.Call, op *telemetry.Op) {
	h.obs.CallStarted(ctx)
	defer h.obs.CallEnded(ctx)
	resp := &responder{h: h, w: w}
	defer resp.close()
	call.Late = resp
	// A call that may report progress, from a client that reads streams,
	// is answered as an SSE stream: progress notifications, then the result.
	if token := call.Request.Meta.ProgressToken; token != nil && acceptsSSE(r.Header.Values("Accept")) {
		resp.stream = startSSE(w, h.bounded)
		call.StreamProgress(token, resp.progress)
	}
	answer, err := h.sys.Ask(call)
	if err != nil {
		// The client went away: its tool's context is cancelled, and
		// nothing more is written for it.
		op.End(context.WithoutCancel(ctx), 0, false)
		return
	}
	// Stage 8: the send; after it only telemetry runs.
	resp.answer(answer.Body)
	op.End(r.Context(), answer.Code, answer.ToolError)
}

var (
	errMethodNotFound = wire.NewError(wire.CodeMethodNotFound)
	rejTruncated      = reject(StageParse, http.StatusBadRequest,
		wire.Errorf(wire.CodeParseError, "Parse error: the body ended before its declared end"))
)

// readBody reads the whole body within the limit. The exact-size read for a
// declared Content-Length avoids io.ReadAll's growth copies.
//
// A declared length was checked against the limit at the wire stage, and
// net/http's body reader stops at it, so only a chunked body of unknown
// length needs the MaxBytesReader.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
}

// bufferedAnswer is the largest answer that net/http buffers whole before
// the handler returns (its chunking threshold), so writing it never blocks
// on a client that does not read.
const bufferedAnswer = 2048

// writeAnswer writes body as a 200 JSON answer. One that fits net/http's
// buffer goes into it whole and cannot block here (the flush happens after
// the handler has let go of its place); a larger one is written under the
// write deadline.
func (h *Handler) writeAnswer(w http.ResponseWriter, body []byte) {
	if len(body) <= bufferedAnswer {
		writeJSON(w, http.StatusOK, body)
		return
	}
	h.bounded(w, func() { writeJSON(w, http.StatusOK, body) })
}

// bounded runs write under the write deadline, then lifts it: the
// connection lives on for the next request of a keep-alive client, and
// net/http sets no deadline of its own when the server has no WriteTimeout.
func (h *Handler) bounded(w http.ResponseWriter, write func()) {
	if h.writeTime < 0 {
		write()
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(h.writeTime))
	write()
	_ = rc.SetWriteDeadline(time.Time{})
}

// enter admits one request into the method stage, or refuses it when the
// bound is reached or the server is shutting down.
func (h *Handler) enter() bool {
	n := h.inFlight.Add(1)
	if h.closing.Load() || (h.maxInFlight > 0 && n > h.maxInFlight) {
		h.leave()
		return false
	}
	return true
}

func (h *Handler) leave() {
	if h.inFlight.Add(-1) == 0 && h.closing.Load() {
		h.mu.Lock()
		select {
		case <-h.drained:
		default:
			close(h.drained)
		}
		h.mu.Unlock()
	}
}

// Drain stops admitting requests to methods and waits until every admitted
// one has been answered, or ctx ends. Requests that arrive meanwhile are
// answered 503 with Retry-After, never dropped.
func (h *Handler) Drain(ctx context.Context) error {
	h.closing.Store(true)
	if h.inFlight.Load() == 0 {
		h.mu.Lock()
		select {
		case <-h.drained:
		default:
			close(h.drained)
		}
		h.mu.Unlock()
	}
	select {
	case <-h.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// InFlight returns the number of requests in the method stage.
func (h *Handler) InFlight() int { return int(h.inFlight.Load()) }
