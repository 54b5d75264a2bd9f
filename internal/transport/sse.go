package transport

import (
	"net/http"
	"strings"
)

// sseWriter answers one request as a Server-Sent Events stream scoped to it
// (Streamable HTTP): notifications first, then the response, which ends the
// stream. Each frame is `event: message` and one `data:` line; JSON never
// contains a raw newline, so one line always holds a message.
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

// send writes one message frame and flushes it. Write errors mean the
// client is gone; the request context tells the rest of the server.
func (s *sseWriter) send(msg []byte) {
	buf := make([]byte, 0, len(msg)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	s.bounded(s.w, func() {
		_, _ = s.w.Write(buf)
		_ = s.rc.Flush()
	})
}

// acceptsSSE reports whether an Accept header lists text/event-stream
// itself: progress is streamed only to a client that says it reads streams.
func acceptsSSE(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}
