// Package inproc drives an http.Handler in process with one request and one
// ResponseWriter that are reused from call to call, so that what a
// benchmark or a profile of the handler counts is the handler's own work:
// httptest.NewRecorder allocates a recorder, a header map and a buffer per
// request, and a new request per call would charge its construction too.
package inproc

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
)

// Request returns a 2026-07-28 POST of body to /mcp with the headers a
// conforming client sends for method (and name, when not empty, as
// Mcp-Name), and the function that rewinds its body for the next call. The
// body is made bytes once, here.
func Request(method, name, body string) (*http.Request, func()) {
	b := []byte(body)
	rd := bytes.NewReader(b)
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:38180/mcp", io.NopCloser(rd))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	if name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	return r, func() { rd.Reset(b) }
}

// Sink is a reusable http.ResponseWriter that keeps the status and the
// body of the last answer.
type Sink struct {
	header http.Header
	Status int
	Body   []byte
}

// NewSink returns an empty Sink.
func NewSink() *Sink { return &Sink{header: http.Header{}} }

// Header implements http.ResponseWriter.
func (s *Sink) Header() http.Header { return s.header }

// WriteHeader implements http.ResponseWriter.
func (s *Sink) WriteHeader(code int) {
	if s.Status == 0 {
		s.Status = code
	}
}

// Write implements http.ResponseWriter.
func (s *Sink) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	s.Body = append(s.Body, b...)
	return len(b), nil
}

// WriteString is net/http's too (its ResponseWriter is an io.StringWriter),
// so that writing a string costs here what it costs there: no copy.
func (s *Sink) WriteString(str string) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	s.Body = append(s.Body, str...)
	return len(str), nil
}

// Reset empties the Sink for the next call, keeping its storage.
func (s *Sink) Reset() {
	clear(s.header)
	s.Status = 0
	s.Body = s.Body[:0]
}

// EvictCaches writes one byte in every 64-byte cache line of buf. Walked
// between two calls, a buffer twice the size of a cache leaves the next
// call to find its own code and data out of that cache, as a request does
// on a core that did other work since the last one.
func EvictCaches(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}
