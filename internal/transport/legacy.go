package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// The 2025 era at the edge (docs/design.md §1a): its stage 5, its method
// table's answer, and the requests a 2025-era call sends its client on the
// call's stream, whose answers the client POSTs back as JSON-RPC responses.

// checkLegacyFields is stage 5 for a 2025-era request: its revision is
// known by now (wire.LegacyVersion). What remains is its params (err, from
// ParseLegacyRequest) and an initialize's, each -32602; a 2025 request
// carries none of the 2026-07-28 headers and declares no capabilities.
// JSON-RPC errors of the era are HTTP 200, as its servers answer them.
func (h *Handler) checkLegacyFields(req *wire.Request, err *wire.Error, msg *wire.Message, ref toolRef, op *telemetry.Op) *rejection {
	if err == nil && req.Method == wire.MethodInitialize {
		err = wire.CheckInitialize(msg.Params)
	}
	if err != nil {
		return reject(StageProtocol, http.StatusOK, err)
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
	mu   sync.Mutex
	m    map[string]*pendingRequest
	next atomic.Uint64
}

type pendingRequest struct {
	subject string
	answer  chan wire.Response // buffered: delivery never blocks
}

// add registers a request of the caller subject and returns its id.
func (p *pendingRequests) add(subject string) (id string, pr *pendingRequest) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id = "wymcp-" + strconv.FormatUint(p.next.Add(1), 10) + "-" + base64.RawURLEncoding.EncodeToString(b[:])
	pr = &pendingRequest{subject: subject, answer: make(chan wire.Response, 1)}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]*pendingRequest{}
	}
	p.m[strconv.Quote(id)] = pr
	p.mu.Unlock()
	return id, pr
}

// remove forgets the request with id.
func (p *pendingRequests) remove(id string) {
	p.mu.Lock()
	delete(p.m, strconv.Quote(id))
	p.mu.Unlock()
}

// deliver hands r to the request it answers, if this server awaits it from
// subject, and reports whether it did.
func (p *pendingRequests) deliver(r wire.Response, subject string) bool {
	p.mu.Lock()
	pr := p.m[r.ID.JSON()]
	if pr != nil && pr.subject == subject {
		delete(p.m, r.ID.JSON())
	} else {
		pr = nil
	}
	p.mu.Unlock()
	if pr == nil {
		return false
	}
	pr.answer <- r
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
			h.writeRejection(w, r, &x.op, resp.ID, rej)
			return
		}
		x.op.End(ctx, 0, false)
	}
	// The answer outlives this request, whose body buffer is reused.
	resp.Result, resp.Error = bytes.Clone(resp.Result), bytes.Clone(resp.Error)
	if !h.pending.deliver(resp, caller.Subject(ctx)) {
		// id null: the id is one of this server's own requests, not a
		// request of the client's that this answers.
		h.writeRejection(w, r, nil, wire.ID{}, rejUnawaited)
		return
	}
	h.closeIfDraining(w.Header())
	w.WriteHeader(http.StatusAccepted)
}

var _ actors.ClientRequester = (*responder)(nil)

// errStreamOver: the call's answer was written, or its handler returned.
var errStreamOver = errors.New("the call's stream has ended")

// RequestClient sends a request to the client on the call's stream, which
// it starts if the call has not streamed yet, and waits for the answer the
// client POSTs back (serveResponse), or for ctx.
func (p *responder) RequestClient(ctx context.Context, method string, params wire.RawJSON) (wire.RawJSON, error) {
	id, pr := p.h.pending.add(caller.Subject(ctx))
	defer p.h.pending.remove(id)
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
	select {
	case r := <-pr.answer:
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
