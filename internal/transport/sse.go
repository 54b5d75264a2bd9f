package transport

import (
	"io"
	"net/http"
)

// sseWriter answers one request as a Server-Sent Events stream scoped to it
// (Streamable HTTP): notifications first, then the response, which ends the
// stream. Each frame is `event: message` and one `data:` line.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	bounded func(http.ResponseWriter, func())
}

// startSSE begins the stream; bounded runs each write under the handler's
// write deadline.
func startSSE(w http.ResponseWriter, bounded func(http.ResponseWriter, func())) *sseWriter {
	hdr := w.Header()
	hdr["Content-Type"] = []string{"text/event-stream"}
	// no-transform keeps proxies from buffering or compressing the stream;
	// X-Accel-Buffering turns off nginx's buffering (spec: SHOULD).
	hdr["Cache-Control"] = []string{"no-cache, no-transform"}
	hdr["X-Accel-Buffering"] = []string{"no"}
	w.WriteHeader(http.StatusOK)
	s := &sseWriter{w: w, rc: http.NewResponseController(w), bounded: bounded}
	bounded(w, func() { _ = s.rc.Flush() })
	return s
}

// notify writes one notification frame and flushes it.
func (s *sseWriter) notify(msg []byte) {
	s.frame(func(w io.Writer) {
		_, _ = io.WriteString(w, sseHead)
		_, _ = w.Write(msg)
		_, _ = io.WriteString(w, sseTail)
	})
}

// answer writes the response frame and flushes it.
func (s *sseWriter) answer(e envelope) { s.frame(e.writeSSE) }

// frame writes one frame under the write deadline and flushes it. Write
// errors mean the client is gone; the request context tells the rest of
// the server.
func (s *sseWriter) frame(write func(io.Writer)) {
	s.bounded(s.w, func() {
		write(s.w)
		_ = s.rc.Flush()
	})
}

// acceptsSSE reports whether an Accept header lists text/event-stream
// itself: progress is streamed only to a client that says it reads streams.
func acceptsSSE(values []string) bool { return accepts(values, streamTypes) }
