package upstream_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The gateway's cost of a forwarded tools/call, in process: the same echo
// call served by the origin directly, through the gateway to the origin,
// and through the gateway to a canned upstream that answers without
// parsing (the gateway's own cost, with the fake's few allocations).
// Compare them in one run (bench/README.md, "The hop").

// cannedUpstream answers server/discover, tools/list and every tools/call
// with fixed bytes.
type cannedUpstream struct{ discover, list, call []byte }

func (c *cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	body := c.call
	switch r.Header.Get("Mcp-Method") {
	case "server/discover":
		body = c.discover
	case "tools/list":
		body = c.list
	}
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    r,
	}, nil
}

// handlerClient serves requests with h on the calling goroutine.
type handlerClient struct{ h http.Handler }

func (c handlerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	srv := r.Clone(r.Context())
	srv.RequestURI = r.URL.RequestURI()
	srv.RemoteAddr = "127.0.0.1:1234"
	srv.Host = r.URL.Host
	c.h.ServeHTTP(rec, srv)
	return rec.Result(), nil
}

func benchOrigin(b *testing.B) *wymcp.Server {
	s, err := wymcp.New(upstreamInfo, nil, originTools(b)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

func benchGateway(b *testing.B, rt http.RoundTripper) *wymcp.Server {
	u, err := upstream.Connect(context.Background(), upstream.Options{Name: "origin", URL: "http://127.0.0.1:1/mcp", Prefix: "o_", HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := wymcp.New(gatewayInfo, nil, u.Tools()...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// serve runs b.N calls of r against h, each answered 200.
func serve(b *testing.B, h http.Handler, r mcptest.RPC) {
	req, err := r.Request(context.Background(), "http://127.0.0.1:1/mcp")
	if err != nil {
		b.Fatal(err)
	}
	req.RemoteAddr = "127.0.0.1:1234"
	req.RequestURI = "/mcp"
	body := []byte(r.Body)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req.Body = io.NopCloser(bytes.NewReader(body))
		w.status, w.n = 0, 0
		clear(w.h)
		h.ServeHTTP(w, req)
		if w.status != 0 && w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(s int)           { d.status = s }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

func BenchmarkHop(b *testing.B) {
	call := mcptest.ToolCall("echo", `{"text":"hello"}`)
	forwarded := mcptest.ToolCall("o_echo", `{"text":"hello"}`)
	b.Run("direct", func(b *testing.B) {
		serve(b, benchOrigin(b), call)
	})
	b.Run("gateway", func(b *testing.B) {
		serve(b, benchGateway(b, handlerClient{benchOrigin(b)}), forwarded)
	})
	b.Run("gateway-only", func(b *testing.B) {
		origin := benchOrigin(b)
		record := func(r mcptest.RPC) []byte {
			rec := httptest.NewRecorder()
			req, _ := r.Request(context.Background(), "http://127.0.0.1:1/mcp")
			req.RemoteAddr = "127.0.0.1:1234"
			origin.ServeHTTP(rec, req)
			return rec.Body.Bytes()
		}
		canned := &cannedUpstream{
			discover: record(mcptest.Call("server/discover", "")),
			list:     record(mcptest.Call("tools/list", "")),
			call:     record(call),
		}
		// The canned answers carry id 1; the gateway's requests count up
		// from there, so the call's id is rewritten per request.
		serve(b, benchGateway(b, &idEcho{canned}), forwarded)
	})
}

// idEcho answers each tools/call with the canned answer under the
// request's id.
type idEcho struct{ c *cannedUpstream }

func (e *idEcho) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := e.c.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	id := body[strings.Index(string(body), `"id":`)+5:]
	id = id[:bytes.IndexByte(id, ',')]
	canned, _ := io.ReadAll(resp.Body)
	out := bytes.Replace(canned, []byte(`"id":1,`), append(append([]byte(`"id":`), id...), ','), 1)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	return resp, nil
}

var _ = tools.Must
