package transport

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/wire"
)

// responder writes the answer of one tools/call. A call's tool runs on the
// request's goroutine, and two other goroutines may want to write while it
// does: one of the tool's own, reporting progress to an SSE stream, and the
// actors' watchdog, answering for a tool that ignores its deadline. The
// responder serializes them: progress only before the answer, exactly one
// answer, and nothing once the handler is returning (net/http forbids
// touching the ResponseWriter after ServeHTTP returns).
type responder struct {
	h      *Handler
	w      http.ResponseWriter
	id     wire.ID
	stream *sseWriter // nil: the answer is one JSON body

	mu   sync.Mutex
	over bool // an answer was written, or the handler is returning
	// closed is set by close, after which hold releases at once; charged
	// are the bytes of the body budget that the client's answers given to
	// this call hold (legacy.go), released by close.
	closed  bool
	charged int64
	// answerHeld is what the call holds of the answer budget: its
	// reservation, then its answer's charge (answers.go); given back by
	// close.
	answerHeld int64
}

// progress writes one notifications/progress frame for token, if the
// stream is still open. The notification is built under the lock, after
// that check: token is a slice of the request's body, which is reused once
// the handler has returned, and a tool's goroutine may report late.
func (p *responder) progress(token wire.RawJSON, progress float64, total *float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return
	}
	if b, err := progressNotification(token, progress, total, message); err == nil {
		p.stream.notify(b)
	}
}

// answer writes the reply as the answer, unless one was written. It
// returns the answer's charge to the answer budget, with true when it was
// the answer.
func (p *responder) answer(r actors.Reply) (charge int64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return 0, false
	}
	if e, write := p.claim(r); write {
		p.h.writeAnswer(p.w, replyStatus(r), e)
	}
	return p.answerHeld, true
}

// claim makes r the answer if none was written (the first of answer and
// WriteLate wins) and, on a stream, sends it as the stream's last event.
// It returns the envelope the caller must write, with ok, only when r won
// and the answer is a plain JSON body. p.mu is held.
func (p *responder) claim(r actors.Reply) (e envelope, ok bool) {
	if p.over {
		return e, false
	}
	p.over = true
	e = replyEnvelope(p.id, r)
	// From here the answer exists: the call holds its real charge, which
	// may exceed what it reserved (answers.go).
	charge := answerCharge(e.len())
	p.h.answers.adjust(p.answerHeld, charge)
	p.answerHeld = charge
	if p.stream != nil {
		p.stream.answer(e)
		return e, false
	}
	return e, true
}

var _ actors.LateWriter = (*responder)(nil)

// WriteLate writes the watchdog's reply while the tool still holds the
// request's goroutine, and flushes it: the handler, which would flush on
// return, returns only when the tool does.
func (p *responder) WriteLate(r actors.Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.claim(r)
	if !ok {
		return
	}
	// The length goes out with the headers: flushed before the handler
	// returns, a body without one would be chunked, and the client would
	// wait for the last chunk until the tool returned.
	hdr := p.w.Header()
	hdr["Content-Type"] = jsonContentType
	hdr["Content-Length"] = []string{strconv.Itoa(e.len())}
	p.h.closeIfDraining(hdr)
	p.h.bounded(p.w, func() {
		p.w.WriteHeader(http.StatusOK)
		e.writeTo(p.w)
		_ = http.NewResponseController(p.w).Flush()
	})
}

// close ends the responder: from now on nothing is written, and what the
// call held of the body budget and of the answer budget is given back.
func (p *responder) close() {
	p.mu.Lock()
	p.over, p.closed = true, true
	charged, answerHeld := p.charged, p.answerHeld
	p.charged, p.answerHeld = 0, 0
	p.mu.Unlock()
	if charged != 0 {
		p.h.bodyHeld.Add(-charged)
	}
	p.h.answers.adjust(answerHeld, 0)
}
