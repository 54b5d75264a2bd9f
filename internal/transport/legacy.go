package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// The 2025 era at the edge (docs/design.md §1a): its stage 5, its method
// table's answer, and the requests a 2025-era call sends its client on the
// call's stream, whose answers the client POSTs back as JSON-RPC responses.

// checkLegacyFields is stage 5 for a 2025-era request: its revision is
// known by now (wire.LegacyVersion). What remains is its params (err, from
// ParseLegacyRequest) and an initialize's, each -32602 with HTTP 200, as
// the era's servers answer them; and the 2026-07-28 mirror headers, which a
// 2025 request need not carry but may not contradict (-32020, 400, as in
// 2026-07-28: a gateway in front may route on them). A 2025 request
// declares no capabilities.
func (h *Handler) checkLegacyFields(r *http.Request, req *wire.Request, err *wire.Error, msg *wire.Message, ref toolRef, op *telemetry.Op) *rejection {
	if err == nil && req.Method == wire.MethodInitialize {
		err = wire.CheckInitialize(msg.Params)
	}
	if err != nil {
		return reject(StageProtocol, http.StatusOK, err)
	}
	var params []wire.HeaderParam
	if ref.tool != nil {
		params = ref.tool.HeaderParams()
	}
	if perr := wire.CheckLegacyHeaders(r.Header, req, params); perr != nil {
		return reject(StageProtocol, http.StatusBadRequest, perr)
	}
	if ref.tool != nil {
		op.SetTool(ref.name)
	} else if ref.ok {
		op.SetUnknownTool(ref.name)
	}
	return nil
}

var rejMethodNotFound, rejLegacyMethodNotFound = reject(StageMethod, http.StatusNotFound, errMethodNotFound), reject(StageMethod, http.StatusOK, errMethodNotFound)

// methodNotFound is stage 6's answer: 404 in 2026-07-28 (docs/design.md
// §5), HTTP 200 in the 2025 era, whose clients read a JSON-RPC error only
// from a 2xx answer.
func methodNotFound(legacy bool) *rejection {
	if legacy {
		return rejLegacyMethodNotFound
	}
	return rejMethodNotFound
}

// pendingRequests are the requests this server sent to 2025-era clients
// and whose answers it awaits, by the JSON text of their ids. Each id is
// random, so that no client can answer another's request; the answer must
// also come from the caller the call's request came from.
type pendingRequests struct {
	mu sync.Mutex
	m  map[string]*pendingRequest // by the id's string value
}

type pendingRequest struct {
	subject string
	// answer holds the delivered answer, with the bytes of the body budget
	// charged for it: buffered, and sent to under mu, so that once the
	// request is removed it holds an answer or never will (RequestClient
	// takes the charge either way).
	answer chan heldAnswer
}

// heldAnswer is a client's answer kept past its POST, and what it is
// charged to the body budget until its call ends (responder.close).
type heldAnswer struct {
	wire.Response
	charged int64
}

// add registers a request of the caller subject and returns its id: random,
// so that it says nothing of the server either.
func (p *pendingRequests) add(subject string) (id string, pr *pendingRequest) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id = "wymcp-" + base64.RawURLEncoding.EncodeToString(b[:])
	pr = &pendingRequest{subject: subject, answer: make(chan heldAnswer, 1)}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]*pendingRequest{}
	}
	p.m[id] = pr
	p.mu.Unlock()
	return id, pr
}

// remove forgets the request with id.
func (p *pendingRequests) remove(id string) {
	p.mu.Lock()
	delete(p.m, id)
	p.mu.Unlock()
}

// deliver hands a to the request it answers, if this server awaits it from
// subject, and reports whether it did.
func (p *pendingRequests) deliver(a heldAnswer, subject string) bool {
	// By value: the client may write the id with escapes of its own.
	id, ok := strictjson.Unquote(wire.RawJSON(a.ID.JSON()))
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.m[id]
	if pr == nil || pr.subject != subject {
		return false
	}
	delete(p.m, id)
	pr.answer <- a
	return true
}

var (
	errUnawaited = wire.Errorf(wire.CodeInvalidRequest, "Invalid Request: no request of this server awaits this response (its call has ended, or it was sent by another replica)")
	rejUnawaited = reject(StageParse, http.StatusBadRequest, errUnawaited)
)

// serveResponse takes a posted JSON-RPC response of a 2025-era client: the
// answer to a request a call sent it (RequestClient). It is authenticated
// as any request is, and accepted with 202 when a call of this server, of
// the same caller, awaits it; otherwise it is refused with 400, and the
// call it answers, on another replica, ends at its deadline (docs/design.md
// §1a).
func (h *Handler) serveResponse(w http.ResponseWriter, r *http.Request, in *inbound, body []byte) {
	resp, perr := wire.ParseResponse(&in.scratch, body)
	if perr != nil {
		h.writeRejection(w, r, nil, wire.ID{}, reject(StageParse, http.StatusBadRequest, perr))
		return
	}
	// The 2025 transport checks MCP-Protocol-Version on every POST.
	if v := r.Header.Get(wire.HeaderProtocolVersion); v != "" && !h.versions.IsLegacy(v) && v != wire.Version {
		h.writeRejection(w, r, nil, wire.ID{}, reject(StageProtocol, http.StatusBadRequest, h.versions.Unsupported(v)))
		return
	}
	ctx := r.Context()
	if h.auth != nil {
		x := new(exchange)
		msg := wire.Message{Kind: wire.KindNotification}
		ctx = h.obs.Start(ctx, &x.op, r, &msg, nil)
		var rej *rejection
		var gone bool
		if ctx, rej, gone = h.authenticate(ctx, r, nil, &x.op); gone {
			x.op.End(context.WithoutCancel(ctx), 0, false)
			return
		} else if rej != nil {
			// id null, as for every refusal of an answer: the id is one of
			// this server's own requests.
			h.writeRejection(w, r, &x.op, wire.ID{}, rej)
			return
		}
		x.op.End(ctx, 0, false)
	}
	// The answer outlives this request, whose body buffer is reused, and
	// may be held by its call until the call ends: it is charged to the
	// body budget as the bodies being read are (docs/design.md §3 stage 1),
	// so that answers held by waiting calls cannot grow memory without bound.
	held := heldAnswer{Response: resp, charged: int64(len(resp.Result) + len(resp.Error))}
	if h.bodyHeld.Add(held.charged) > h.bodyLimit {
		h.bodyHeld.Add(-held.charged)
		h.writeRejection(w, r, nil, wire.ID{}, rejBodyBudget)
		return
	}
	held.Result, held.Error = bytes.Clone(resp.Result), bytes.Clone(resp.Error)
	if !h.pending.deliver(held, caller.Subject(ctx)) {
		h.bodyHeld.Add(-held.charged)
		// id null: the id is one of this server's own requests, not a
		// request of the client's that this answers.
		h.writeRejection(w, r, nil, wire.ID{}, rejUnawaited)
		return
	}
	h.closeIfDraining(w.Header())
	w.WriteHeader(http.StatusAccepted)
}

// askingBound is how many calls may wait for their 2025-era clients'
// answers at once: half the in-flight bound, so that calls whose clients
// never answer, which hold their places until their deadlines, cannot take
// every place (2048 when the in-flight bound is off).
func askingBound(maxInFlight int64) int64 {
	if maxInFlight <= 0 {
		return 2048
	}
	return max(maxInFlight/2, 1)
}

var _ actors.ClientRequester = (*responder)(nil)

// errStreamOver: the call's answer was written, or its handler returned.
var errStreamOver = errors.New("the call's stream has ended")

// RequestClient sends a request to the client on the call's stream, which
// it starts if the call has not streamed yet, and waits for the answer the
// client POSTs back (serveResponse), or for ctx.
func (p *responder) RequestClient(ctx context.Context, method string, params wire.RawJSON) (wire.RawJSON, error) {
	if p.h.asking.Add(1) > p.h.maxAsking {
		p.h.asking.Add(-1)
		return nil, actors.ErrAskingFull
	}
	defer p.h.asking.Add(-1)
	id, pr := p.h.pending.add(caller.Subject(ctx))
	defer func() {
		p.h.pending.remove(id)
		// An answer delivered as ctx ended is this call's to release.
		select {
		case a := <-pr.answer:
			p.hold(a.charged)
		default:
		}
	}()
	msg, err := wire.Marshal(struct {
		JSONRPC string       `json:"jsonrpc"`
		ID      string       `json:"id"`
		Method  string       `json:"method"`
		Params  wire.RawJSON `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.over {
		p.mu.Unlock()
		return nil, errStreamOver
	}
	if p.stream == nil {
		p.h.closeIfDraining(p.w.Header())
		p.stream = startSSE(p.w, p.h.bounded)
	}
	p.stream.notify(msg)
	p.mu.Unlock()
	// The call waits for its client now, as long as a person takes: its
	// tool's next calls must not wait for its answer (answers.go).
	if req, _ := ctx.Value(toolrun.RequestKey{}).(*wire.Request); req != nil {
		if name, ok := req.NameString(); ok {
			p.h.answers.asked(name)
		}
	}
	select {
	case r := <-pr.answer:
		p.hold(r.charged)
		if r.Error != nil {
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = wire.Unmarshal(r.Error, &e)
			return nil, fmt.Errorf("%w (%d %s)", actors.ErrClientAnswer, e.Code, e.Message)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hold keeps n bytes of the body budget charged until the call ends: the
// answers the call was given, which its rounds carry.
func (p *responder) hold(n int64) {
	p.mu.Lock()
	if p.closed {
		// The handler has returned (a client gone): nothing will release it.
		p.mu.Unlock()
		p.h.bodyHeld.Add(-n)
		return
	}
	p.charged += n
	p.mu.Unlock()
}
