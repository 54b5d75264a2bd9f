package transport

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/telemetry"
)

// bodyRequest is a POST whose body is src, declaring length n (-1: chunked).
func bodyRequest(src io.Reader, n int64) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", src)
	r.ContentLength = n
	return r
}

// TestBodyGrowsAsItArrives: a body that declares more than it sends holds a
// buffer the size of what arrived (doubling from firstChunk), not the size
// it declared; a complete body reads whole, whatever its size and however
// its bytes are split.
func TestBodyGrowsAsItArrives(t *testing.T) {
	h := &Handler{maxBody: 4 << 20, bodyLimit: bodyBudget(4 << 20)}

	in := new(inbound)
	sent := bytes.Repeat([]byte("a"), 10_000)
	_, err := h.readBody(httptest.NewRecorder(), bodyRequest(bytes.NewReader(sent), 4<<20), in)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a body cut short: err %v", err)
	}
	if in.held > 4*int64(len(sent)) || in.held < int64(len(sent)) {
		t.Errorf("10,000 bytes of a declared 4 MiB hold %d bytes of the budget", in.held)
	}
	h.release(in)
	if h.bodyHeld.Load() != 0 {
		t.Errorf("after release the budget holds %d bytes", h.bodyHeld.Load())
	}

	for _, n := range []int{0, 1, 511, 512, 4095, 4096, 4097, 65536, 65537, 1 << 20} {
		want := bytes.Repeat([]byte("b"), n)
		for _, chunked := range []bool{false, true} {
			in := new(inbound)
			length := int64(n)
			if chunked {
				length = -1
			}
			got, err := h.readBody(httptest.NewRecorder(), bodyRequest(iotest.HalfReader(bytes.NewReader(want)), length), in)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%d bytes (chunked %v): %d bytes, err %v", n, chunked, len(got), err)
			}
			h.release(in)
		}
	}
	if h.bodyHeld.Load() != 0 {
		t.Errorf("after every release the budget holds %d bytes", h.bodyHeld.Load())
	}
}

// TestBodyBudget: the buffers of bodies being read come out of one budget,
// but for their first chunk; a body that finds no room for its next buffer
// is refused before a byte past its first chunk is read, a small body is
// read whatever is left of the budget, and the room comes back when a
// request ends.
func TestBodyBudget(t *testing.T) {
	h := &Handler{maxBody: 1 << 20, bodyLimit: 64 << 10}
	held := new(inbound)
	if !h.reserve(held, 62<<10) {
		t.Fatal("the first reservation found no room")
	}
	src := &countingReader{r: strings.NewReader(strings.Repeat("c", 8<<10))}
	_, err := h.readBody(httptest.NewRecorder(), bodyRequest(src, 8<<10), new(inbound))
	if err != errBodyBudget {
		t.Fatalf("a body past the budget: err %v, want errBodyBudget", err)
	}
	if src.n > firstChunk {
		t.Errorf("%d bytes were read before the body was refused, more than the first chunk", src.n)
	}
	for _, n := range []int64{300, firstChunk} {
		small := new(inbound)
		if got, err := h.readBody(httptest.NewRecorder(), bodyRequest(strings.NewReader(strings.Repeat("s", int(n))), n), small); err != nil || int64(len(got)) != n {
			t.Errorf("a %d-byte body with the budget spent: %d bytes, err %v", n, len(got), err)
		}
		h.release(small)
	}
	h.release(held)
	in := new(inbound)
	if got, err := h.readBody(httptest.NewRecorder(), bodyRequest(strings.NewReader(strings.Repeat("c", 8<<10)), 8<<10), in); err != nil || len(got) != 8<<10 {
		t.Fatalf("with the budget back: %d bytes, err %v", len(got), err)
	}
	h.release(in)
}

// TestBodyBudgetAnswer: the answer to a body that found the budget spent is
// 503 with Retry-After, -32603 with a null id, and the connection closes
// (its unread body is not drained).
func TestBodyBudgetAnswer(t *testing.T) {
	cfg := &config.Server{MaxBodyBytes: 1 << 20}
	h := New(cfg, nil, telemetry.New(telemetry.Options{}))
	h.bodyLimit = 1 << 10
	w := httptest.NewRecorder()
	// Past what the pool keeps: no pooled buffer can take it.
	r := bodyRequest(strings.NewReader(strings.Repeat("d", 100<<10)), 100<<10)
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != retryAfterSeconds || w.Header().Get("Connection") != "close" {
		t.Errorf("status %d, headers %v", w.Code, w.Header())
	}
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy: retry later"}}`; strings.TrimSpace(w.Body.String()) != want {
		t.Errorf("body %s, want %s", w.Body.String(), want)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestPooledBufferCharged: a pooled buffer larger than the first chunk is
// charged to the budget while a request holds it, whatever length the
// request declared, and given back with it; when the budget has no room
// for it, the request lets it go and reads a small body all the same.
func TestPooledBufferCharged(t *testing.T) {
	h := &Handler{maxBody: 1 << 20, bodyLimit: 128 << 10}
	pooled := func() *inbound { return &inbound{body: make([]byte, 0, maxPooledBody)} }

	in := pooled()
	if got, err := h.readBody(httptest.NewRecorder(), bodyRequest(strings.NewReader("{}"), 2), in); err != nil || string(got) != "{}" {
		t.Fatalf("a small body in a pooled buffer: %q, %v", got, err)
	}
	if want := int64(maxPooledBody - firstChunk); in.held != want || h.bodyHeld.Load() != want {
		t.Errorf("a 64 KiB pooled buffer holds %d (budget %d), want %d", in.held, h.bodyHeld.Load(), want)
	}
	second := pooled()
	if _, err := h.readBody(httptest.NewRecorder(), bodyRequest(strings.NewReader("{}"), 2), second); err != nil {
		t.Fatal(err)
	}
	third := pooled()
	got, err := h.readBody(httptest.NewRecorder(), bodyRequest(strings.NewReader(`{"a":1}`), 7), third)
	if err != nil || string(got) != `{"a":1}` {
		t.Fatalf("a small body with the budget spent: %q, %v", got, err)
	}
	if third.held != 0 || cap(third.body) >= maxPooledBody {
		t.Errorf("with the budget spent the pooled buffer was kept: held %d, cap %d", third.held, cap(third.body))
	}
	for _, x := range []*inbound{in, second, third} {
		h.release(x)
	}
	if h.bodyHeld.Load() != 0 {
		t.Errorf("after release the budget holds %d", h.bodyHeld.Load())
	}
}
