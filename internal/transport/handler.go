package transport

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// retryAfterSeconds is the Retry-After of a 503.
const retryAfterSeconds = "1"

// Handler is the MCP endpoint: an http.Handler for POSTs to one path.
type Handler struct {
	sys *actors.System
	obs *telemetry.Observer
	// tools is the tool set calls are resolved in; SetTools replaces it.
	tools   atomic.Pointer[toolrun.Set]
	maxBody int64
	// versions are the revisions served; pending, the requests sent to
	// 2025-era clients that await their answers (legacy.go).
	versions *wire.Versions
	pending  pendingRequests
	// asking counts the calls waiting for a 2025-era client's answer,
	// bounded by maxAsking (legacy.go).
	asking    atomic.Int64
	maxAsking int64
	// bodyLimit bounds the bytes of body buffers held at once by the
	// requests being read, bodyHeld (body.go).
	bodyLimit   int64
	bodyHeld    atomic.Int64
	maxInFlight int64
	writeTime   time.Duration
	trusted     []netip.Prefix
	origins     map[string]bool
	hosts       map[string]bool
	auth        *authStage // nil: auth off
	// authReady is the authenticator's readiness (config.Auth.Ready); nil
	// when it is always ready.
	authReady func(context.Context) error

	// The drain (drain.go): draining from the start of the lame duck,
	// closing once requests are no longer admitted.
	inFlight atomic.Int64
	draining atomic.Bool
	closing  atomic.Bool
	// drained is closed (under mu) when closing and in-flight reaches 0.
	mu      sync.Mutex
	drained chan struct{}

	// access is the policy stage (access.go).
	access *config.Access

	// answers bounds the bytes of the answers held for their clients
	// (answers.go).
	answers *answerBudget

	// listens are the open listen streams (listen.go), nil when the
	// server serves none (config.Server.ToolsChange off); listening
	// counts them for the drain, as inFlight counts calls.
	listens   *listenHub
	listening atomic.Int64
	// unknown is asked about a call's name the set lacks (nil: never);
	// unknownAsking counts the requests waiting for it, bounded by
	// maxAsking (fields.go).
	unknown       func(ctx context.Context, name string) bool
	unknownAsking atomic.Int64
}

// New returns the Handler of a server whose methods sys answers.
func New(cfg *config.Server, sys *actors.System, obs *telemetry.Observer) *Handler {
	h := &Handler{
		sys:         sys,
		obs:         obs,
		versions:    cfg.Versions,
		maxAsking:   askingBound(cfg.MaxInFlight),
		maxBody:     cfg.MaxBodyBytes,
		bodyLimit:   bodyBudget(cfg.MaxBodyBytes),
		answers:     newAnswerBudget(cfg.AnswerBudget),
		maxInFlight: cfg.MaxInFlight,
		writeTime:   cfg.WriteTimeout,
		trusted:     cfg.TrustedProxies,
		origins:     map[string]bool{},
		hosts:       map[string]bool{},
		drained:     make(chan struct{}),
		unknown:     cfg.UnknownTool,
	}
	h.tools.Store(cfg.Tools)
	if cfg.ToolsChange {
		h.listens = newListenHub(cfg.MaxListenStreams, cfg.MaxListenStreamsPerCaller, sys.ServerMeta())
	}
	for _, o := range cfg.AllowedOrigins {
		h.origins[o] = true
	}
	for _, host := range cfg.AllowedHosts {
		h.hosts[host] = true
	}
	h.access = cfg.Access
	if cfg.Auth != nil {
		h.auth = newAuthStage(cfg.Auth)
		h.authReady = cfg.Auth.Ready
	}
	return h
}

// SetTools replaces the tool set while the handler serves: the lists
// first, then the set calls are resolved in. A request resolved before
// the swap runs with the tool it resolved; one after, with the new set.
//
// When the lists changed, the listen streams are told so, after both are
// published: a client that lists on the notification sees the new set. A
// set that lists as the old one did tells nobody.
func (h *Handler) SetTools(set *toolrun.Set) error {
	changed, err := h.sys.SetTools(set)
	if err != nil {
		return err
	}
	h.tools.Store(set)
	h.answers.sizes.keep(set)
	if changed && h.listens != nil {
		h.listens.changed()
	}
	return nil
}

// SetListTTL makes ttl the ttlMs of tools/list answers from now on (the
// set served is the same: no listen stream is told).
func (h *Handler) SetListTTL(ttl time.Duration) error {
	return h.sys.SetListTTL(h.tools.Load(), ttl)
}

var (
	errBusy     = wire.Errorf(wire.CodeInternalError, "Server busy: retry later")
	rejOverload = reject(StageOverload, http.StatusServiceUnavailable, errBusy).with("Retry-After", retryAfterSeconds)
	// rejClosing carries Connection: close as every answer of a drain does
	// (closeIfDraining): the server is going away.
	rejClosing = reject(StageOverload, http.StatusServiceUnavailable,
		wire.Errorf(wire.CodeInternalError, "Server shutting down: retry later")).with("Retry-After", retryAfterSeconds)
)

// ServeHTTP runs the request path of docs/design.md §3.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Stage 1: the wire.
	if rej := h.checkWire(r); rej != nil {
		h.writeRejection(w, r, nil, wire.ID{}, rej)
		return
	}
	in := takeInbound()
	defer h.release(in)
	h.serveBody(w, r, in)
}

// serveBody runs stages 2 to 8 on the body ServeHTTP reads into in. The
// stages are split at their defers so that Go open-codes them: a function
// with a defer and more than a handful of returns gets the runtime's defer
// records instead, and every request ran through deferreturn and its panic
// machinery, code that a core whose caches other work emptied fetches
// again (bench/footprint.sh; bench/README.md has the measurement).
func (h *Handler) serveBody(w http.ResponseWriter, r *http.Request, in *inbound) {
	body, err := h.readBody(w, r, in)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.writeRejection(w, r, nil, wire.ID{}, rejTooLarge)
			return
		}
		if err == errBodyBudget {
			h.writeRejection(w, r, nil, wire.ID{}, rejBodyBudget)
			return
		}
		// The body ended early (a chunked body cut off, a Content-Length
		// not met): what arrived is not a message. The client may be gone;
		// if it only half-closed, it reads why.
		h.writeRejection(w, r, nil, wire.ID{}, rejTruncated)
		return
	}
	// Stage 2: parse and classify.
	msg, id, perr := wire.ParseInto(&in.scratch, body)
	if perr != nil {
		if wire.IsPostedResponse(perr) && h.versions.ServesLegacy() {
			h.serveResponse(w, r, in, body)
			return
		}
		h.writeRejection(w, r, nil, id, reject(StageParse, http.StatusBadRequest, perr))
		return
	}
	// The request's params are read ahead of their checks (stage 5): their
	// `_meta` carries the trace context of the span that stage 3 onwards
	// records on, and stage 3 needs the tool a call names. A notification
	// has no params the server reads.
	var req *wire.Request
	var reqErr *wire.Error
	var meta *wire.RequestMeta
	// legacy marks a request of the 2025 era, when the server serves one
	// (docs/design.md §1a): its own stage 5 and method table.
	var legacy bool
	if msg.Kind == wire.KindRequest {
		var version string
		if version, legacy = wire.LegacyVersion(msg, r.Header, h.versions); legacy {
			req, reqErr = wire.ParseLegacyRequest(msg, version)
		} else {
			req, reqErr = wire.ParseRequest(msg)
		}
		if req != nil {
			meta = &req.Meta
		}
	}
	// Everything the message needs from here on, in one allocation.
	x := new(exchange)
	op := &x.op
	ctx := h.obs.Start(r.Context(), op, r, &msg, meta)
	ref := h.resolveTool(req)
	// A name the set lacks (not one auth hides) is asked about once the
	// caller is known: the embedder may find it (resolveAgain).
	askUnknown := ref.tool == nil && ref.ok && h.unknown != nil
	// Stage 3: auth, when the server has an authenticator.
	if h.auth != nil {
		var rej *rejection
		var gone bool
		if ctx, rej, gone = h.authenticate(ctx, r, &ref, op); gone {
			op.End(context.WithoutCancel(ctx), 0, false)
			return
		} else if rej != nil {
			h.writeRejection(w, r, op, id, rej)
			return
		}
	}
	if askUnknown {
		var rej *rejection
		var gone bool
		if ctx, rej, gone = h.resolveLate(ctx, r, req, &ref, op); gone {
			op.End(context.WithoutCancel(ctx), 0, false)
			return
		} else if rej != nil {
			h.writeRejection(w, r, op, id, rej)
			return
		}
	}
	// Stage 3's policy: a tool whose rules deny the caller is hidden
	// (access.go).
	h.policy(ctx, req, &ref, op)
	// A caller without auth is told apart by its address, which an
	// upstream's tools need (docs/design.md §10b); other tools pay
	// nothing for it.
	if h.auth == nil && ref.tool != nil && ref.tool.Forwards() {
		ctx = caller.WithAddress(ctx, clientAddress(r, h.trusted))
	}
	// Stage 4: a notification never reaches a method (JSON-RPC forbids
	// answering it with an error; none means anything over HTTP here).
	if msg.Kind == wire.KindNotification {
		h.closeIfDraining(w.Header())
		w.WriteHeader(http.StatusAccepted)
		op.End(r.Context(), 0, false)
		return
	}
	// Stage 5: the protocol fields.
	if legacy {
		if rej := h.checkLegacyFields(r, req, reqErr, &msg, ref, op); rej != nil {
			h.writeRejection(w, r, op, id, rej)
			return
		}
	} else {
		if reqErr != nil {
			reqErr = wire.LegacyRequest(reqErr, r.Header, h.versions)
			h.writeRejection(w, r, op, id, reject(StageProtocol, http.StatusBadRequest, reqErr))
			return
		}
		if rej := h.checkFields(r, req, ref, op); rej != nil {
			h.writeRejection(w, r, op, id, rej)
			return
		}
	}
	// Stage 6: the method table.
	if !h.sys.HasMethod(req.Method, legacy) {
		if h.listens != nil && !legacy && req.Method == wire.MethodListen {
			// A stream, not a call: it holds no in-flight place (listen.go).
			h.serveListen(ctx, w, r, in, op, req, msg.Params)
			return
		}
		h.writeRejection(w, r, op, id, methodNotFound(legacy))
		return
	}
	// A call past its tool's rate limit is refused before it takes a
	// place (access.go).
	if rej := h.rateLimit(ctx, r, &ref); rej != nil {
		h.writeRejection(w, r, op, id, rej)
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
	h.serveMethod(ctx, w, r, in, x, req, ref.tool, legacy)
}

// serveMethod runs the method of a request that holds an in-flight place
// (stage 7), writes its answer (stage 8) and gives the place back.
func (h *Handler) serveMethod(ctx context.Context, w http.ResponseWriter, r *http.Request, in *inbound, x *exchange, req *wire.Request, tool *toolrun.Tool, legacy bool) {
	defer h.leave()
	call, op := &x.call, &x.op
	call.Ctx, call.Request, call.Tool, call.Op = ctx, req, tool, op
	if tool == nil {
		// server/discover, tools/list, and a tools/call naming no tool.
		reply, err := h.sys.Ask(call)
		if err != nil {
			in.abandon()
			op.End(context.WithoutCancel(ctx), 0, false)
			return
		}
		// Stage 8: the send; after it only telemetry runs.
		h.writeAnswer(w, replyStatus(reply), replyEnvelope(req.ID, reply))
		op.End(r.Context(), reply.Code(), reply.ToolError)
		return
	}
	if !h.serveCall(ctx, w, r, x, legacy) {
		in.abandon()
	}
}

// exchange is the state of one classified message past stage 2: its
// telemetry record, its call and, for a tools/call, its responder. They
// live and die together, so they are one allocation instead of three
// (every allocation on this path is paid per request, and the garbage
// collector's work follows them).
type exchange struct {
	op   telemetry.Op
	call actors.Call
	resp responder
}

// serveCall runs a tools/call naming a tool and writes its answer through a
// responder: the tool runs on this goroutine, and progress reports and the
// watchdog's reply may come from others (see responder).
//
// It reports false when the client went away before the answer: then the
// method may still be running on another goroutine (see inbound.abandon).
func (h *Handler) serveCall(ctx context.Context, w http.ResponseWriter, r *http.Request, x *exchange, legacy bool) bool {
	call, op := &x.call, &x.op
	// The answer budget takes the call before its tool runs, or refuses it
	// (answers.go).
	reserved, ok := h.answers.admit(ctx, call.Tool)
	if !ok {
		rej := rejAnswerBudget
		if h.closing.Load() {
			rej = rejClosing
		}
		h.writeRejection(w, r, op, call.Request.ID, rej)
		return true
	}
	h.obs.CallStarted(ctx)
	defer h.obs.CallEnded(ctx)
	resp := &x.resp
	resp.h, resp.w, resp.id, resp.answerHeld = h, w, call.Request.ID, reserved
	defer resp.close()
	call.Late = resp
	// A call that may report progress, from a client that reads streams,
	// is answered as an SSE stream: progress notifications, then the result.
	if token := call.Request.Meta.ProgressToken; token != nil && acceptsSSE(r.Header["Accept"]) {
		// The stream's headers go out now: whether it closes its
		// connection is decided here, not when the result follows.
		h.closeIfDraining(w.Header())
		resp.stream = startSSE(w, h.bounded)
		// Each report becomes a notification on the reporting goroutine (the
		// tool's; the responder serializes), so that reports made before the
		// tool returns precede its answer, and a tool reporting faster than
		// the client reads waits for it.
		call.Ctx = toolrun.WithProgress(call.Ctx, func(progress float64, total *float64, message string) {
			resp.progress(token, progress, total, message)
		})
	}
	if legacy && acceptsSSE(r.Header["Accept"]) {
		// A 2025-era tool that asks for input asks the client on this
		// request's stream (legacy.go).
		call.AskClient = true
	}
	reply, err := h.sys.Ask(call)
	if err != nil {
		// The client went away: its tool's context is cancelled, and
		// nothing more is written for it.
		op.End(context.WithoutCancel(ctx), 0, false)
		return false
	}
	// Stage 8: the send; after it only telemetry runs.
	if charge, ok := resp.answer(reply); ok {
		h.answers.observe(call.Tool.Name(), charge)
	}
	if reply.InputRequired {
		op.InputRequired()
	}
	op.End(r.Context(), reply.Code(), reply.ToolError)
	return true
}

var (
	errMethodNotFound = wire.NewError(wire.CodeMethodNotFound)
	rejTruncated      = reject(StageParse, http.StatusBadRequest,
		wire.Errorf(wire.CodeParseError, "Parse error: the body ended before its declared end"))
)

// writeAnswer writes e as a JSON answer with status. One that fits
// net/http's buffer (chunkingThreshold) goes into it whole and cannot block
// here (the flush happens after the handler has let go of its place); a
// larger one is written under the write deadline.
func (h *Handler) writeAnswer(w http.ResponseWriter, status int, e envelope) {
	if e.len() < chunkingThreshold {
		h.writeJSON(w, status, e)
		return
	}
	h.bounded(w, func() { h.writeJSON(w, status, e) })
}

// replyStatus is the HTTP status of a method's reply: 200, so that a client
// that treats every other status as a transport failure still reads the id
// (docs/design.md §5), except -32021, which the spec pins to 400 wherever
// it arises (schema MissingRequiredClientCapabilityError: "the response
// status code MUST be 400") — a multi-round-trip call that asks for input
// the client did not declare it can give is refused by its method. On an
// SSE stream the status has gone with the stream's start, and the error
// travels in it.
func replyStatus(r actors.Reply) int {
	if r.Err != nil && r.Err.Code == wire.CodeMissingRequiredClientCapability {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// bounded runs write under the write deadline, then lifts it: the
// connection lives on for the next request of a keep-alive client, and
// net/http sets no deadline of its own when the server has no WriteTimeout.
func (h *Handler) bounded(w http.ResponseWriter, write func()) {
	if h.writeTime == 0 {
		write()
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(h.writeTime))
	write()
	_ = rc.SetWriteDeadline(time.Time{})
}
