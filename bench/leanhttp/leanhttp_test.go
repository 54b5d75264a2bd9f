package leanhttp

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
)

// TestRoundTrip: a request reaches the server with its headers and body,
// and the answer comes back whole, by Content-Length or chunked, on a
// connection that is reused.
func TestRoundTrip(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		if r.Header.Get("X-Chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: chunked
		}
		io.WriteString(w, r.Header.Get("Mcp-Method")+":"+string(body))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/mcp")
	tr := &Transport{Addr: u.Host}
	defer tr.CloseIdleConnections()
	for i, chunked := range []bool{false, true, false} {
		req, _ := http.NewRequest("POST", u.String(), bytes.NewReader([]byte(`{"x":1}`)))
		req.Header.Set("Mcp-Method", "tools/call")
		if chunked {
			req.Header.Set("X-Chunked", "1")
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != `tools/call:{"x":1}` || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Mcp-Session-Id") != "s1" {
			t.Errorf("%d: %d %q %v", i, resp.StatusCode, got, resp.Header)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 reused", n)
	}
}
