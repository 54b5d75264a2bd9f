package transport

import (
	"context"
	"io"
	"net/http"
)

// The drain of docs/design.md §4 and §6a, in two steps that the
// server's owner times (wymcp.Server.Drain and Shutdown, cmd/wymcp's
// stop):
//
//  1. BeginDrain: the lame duck. Requests are still admitted and answered,
//     but every answer says "Connection: close", so each keep-alive
//     connection carries at most one more request and its peer (a client,
//     a proxy) opens its next one elsewhere.
//  2. StopAdmitting: requests are no longer admitted (503 + Retry-After)
//     and the ones admitted are waited for.
//
// Both are flags read with one atomic load per answer: the drain costs the
// request path nothing measurable while it is not happening.

// connectionClose is the value of the Connection header of every answer
// written while draining.
var connectionClose = []string{"close"}

// BeginDrain starts the lame duck (step 1), and ends every listen stream
// with its result (listen.go). It may be called more than once, and
// concurrently with requests.
func (h *Handler) BeginDrain() {
	h.draining.Store(true)
	if h.listens != nil {
		h.listens.endAll()
	}
}

// Draining reports whether the lame duck has begun.
func (h *Handler) Draining() bool { return h.draining.Load() }

// closeIfDraining adds "Connection: close" to hdr while draining. It is
// called where an answer's headers are about to be written — not when the
// request arrives — so that an answer to a request that came before the
// drain but is answered during it closes its connection too (a long call,
// a stream). net/http then closes the connection after the answer, and
// the peer, which reads the header, does not send another request on it:
// the connection ends without the race of an idle connection closed under
// a request already on the wire (deploy/nginx/README.md measures that
// race: 46–149 lost calls in six restarts without a drain).
func (h *Handler) closeIfDraining(hdr http.Header) {
	if h.draining.Load() {
		hdr["Connection"] = connectionClose
	}
}

// enter admits one request into the method stage, or refuses it when the
// bound is reached or the server no longer admits.
func (h *Handler) enter() bool {
	n := h.inFlight.Add(1)
	if h.closing.Load() || (h.maxInFlight > 0 && n > h.maxInFlight) {
		h.leave()
		return false
	}
	return true
}

func (h *Handler) leave() {
	if h.inFlight.Add(-1) == 0 && h.closing.Load() && h.listening.Load() == 0 {
		h.signalDrained()
	}
}

// signalDrained closes drained once.
func (h *Handler) signalDrained() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.drained:
	default:
		close(h.drained)
	}
}

// StopAdmitting (step 2; it implies step 1) stops admitting requests to
// methods and waits until every admitted one has been answered, and every
// listen stream has written its end, or ctx ends. Requests that arrive meanwhile are answered 503 with Retry-After,
// never dropped. It may be called more than once, and concurrently.
func (h *Handler) StopAdmitting(ctx context.Context) error {
	h.BeginDrain()
	h.closing.Store(true)
	h.answers.stop()
	if h.inFlight.Load() == 0 && h.listening.Load() == 0 {
		h.signalDrained()
	}
	// Drained wins over an ended ctx: nothing left in flight is a clean
	// stop, whatever the caller's deadline.
	select {
	case <-h.drained:
		return nil
	default:
	}
	select {
	case <-h.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Readiness returns the readiness endpoint's handler: 200 "ready" until the
// lame duck begins, 503 "draining" from then on, to GET and HEAD (405 to
// anything else). It reads one flag and never reaches the request path of
// docs/design.md §3: no Host or Origin check (a kubelet probes with Host
// set to the pod's address), no authentication, no span, no metric.
func (h *Handler) Readiness() http.Handler { return readiness{h} }

type readiness struct{ h *Handler }

func (rd readiness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	rd.h.closeIfDraining(hdr)
	hdr["Content-Type"] = textContentType
	// A cached "ready" would hide the drain from whoever reads it.
	hdr["Cache-Control"] = noStore
	status, text := http.StatusOK, "ready\n"
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		hdr["Allow"] = getHead
		status, text = http.StatusMethodNotAllowed, "method not allowed\n"
	case rd.h.Draining():
		status, text = http.StatusServiceUnavailable, "draining\n"
	case rd.h.authReady != nil && rd.h.authReady(r.Context()) != nil:
		// Every call would be answered 503: route elsewhere meanwhile.
		status, text = http.StatusServiceUnavailable, "auth not ready\n"
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, text)
	}
}

var (
	textContentType = []string{"text/plain; charset=utf-8"}
	noStore         = []string{"no-store"}
	getHead         = []string{"GET, HEAD"}
)
