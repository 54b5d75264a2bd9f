package transport

import (
	"io"
	"net/http"
	"strconv"

	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/wire"
)

// Every JSON-RPC message the server sends is framed here: the envelope
// around a method's reply or a rejection's error, with the request's id,
// and the progress notifications of a stream. The methods return values
// (actors.Reply); nothing below the edge knows an id or an envelope.
//
// A result envelope is written in pieces around the result's bytes rather
// than copied into one buffer: server/discover and tools/list answer with
// bytes precomputed at build time, and writing them as they are costs no
// allocation. net/http buffers the pieces (its 2 KiB chunking buffer), so
// a small answer still leaves in one write with its Content-Length.

const (
	resultHead = `{"jsonrpc":"2.0","id":`
	resultMid  = `,"result":`
	errorMid   = `,"error":`
	closeBrace = `}`
	sseHead    = "event: message\ndata: "
	sseTail    = "\n\n"
)

// envelope is one JSON-RPC response message: the id's JSON text, then the
// result object or, when body is an error object, the error.
type envelope struct {
	id      string // the id's JSON text ("null" when unread)
	isError bool
	body    []byte // the result object, or the error object
}

// replyEnvelope frames a method's reply for id.
func replyEnvelope(id wire.ID, r actors.Reply) envelope {
	if r.Err != nil {
		return errorEnvelope(id, r.Err)
	}
	return envelope{id: id.JSON(), body: r.Result}
}

// errorEnvelope frames a JSON-RPC error for id (docs/design.md §5: the id
// is echoed when it could be read, null otherwise).
func errorEnvelope(id wire.ID, e *wire.Error) envelope {
	return envelope{id: id.JSON(), isError: true, body: wire.AppendErrorObject(make([]byte, 0, 96), e)}
}

// len returns the envelope's length in bytes: what writeTo writes, member
// name included (an error's is one byte shorter than a result's).
func (e envelope) len() int {
	return len(resultHead) + len(e.id) + len(e.mid()) + len(e.body) + len(closeBrace)
}

// mid is the text between the id and the body: the member that names the
// body. len and writeTo both take it from here, so that the Content-Length
// an answer declares is the length it sends.
func (e envelope) mid() string {
	if e.isError {
		return errorMid
	}
	return resultMid
}

// writeTo writes the envelope to w. It asks w for WriteString once, where
// io.WriteString would ask for each piece (net/http's ResponseWriter has
// it; a wrapper that does not is written to through Write).
func (e envelope) writeTo(w io.Writer) {
	sw, ok := w.(io.StringWriter)
	if !ok {
		sw = stringWriter{w}
	}
	_, _ = sw.WriteString(resultHead)
	_, _ = sw.WriteString(e.id)
	_, _ = sw.WriteString(e.mid())
	_, _ = w.Write(e.body)
	_, _ = sw.WriteString(closeBrace)
}

// stringWriter gives a Writer without WriteString one.
type stringWriter struct{ io.Writer }

func (w stringWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// writeSSE writes the envelope as one Server-Sent Events frame. JSON never
// contains a raw newline, so one data line always holds the message.
func (e envelope) writeSSE(w io.Writer) {
	_, _ = io.WriteString(w, sseHead)
	e.writeTo(w)
	_, _ = io.WriteString(w, sseTail)
}

var jsonContentType = []string{"application/json"}

// chunkingThreshold is the most net/http buffers before it starts a
// chunked body: an answer that fits is sent whole, with a Content-Length
// net/http computes itself, when the handler returns.
const chunkingThreshold = 2048

// writeJSON writes e as a complete JSON answer with status. A larger answer
// sets its Content-Length itself, so that no answer is chunked.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, e envelope) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	h.closeIfDraining(hdr)
	if n := e.len(); n >= chunkingThreshold {
		hdr["Content-Length"] = []string{strconv.Itoa(n)}
	}
	w.WriteHeader(status)
	e.writeTo(w)
}

// progressNotification returns a notifications/progress message, the one
// kind of notification a stream carries before its answer.
func progressNotification(token wire.RawJSON, progress float64, total *float64, message string) ([]byte, error) {
	params, err := wire.ProgressParams(token, progress, total, message)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(params)+64)
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":`...)
	b = append(b, params...)
	return append(b, '}'), nil
}
