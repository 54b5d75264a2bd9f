package loadgen

import (
	"bufio"
	"math"
	"strings"
	"testing"
)

func TestHistQuantiles(t *testing.T) {
	var h hist
	for v := int64(1); v <= 100000; v++ {
		h.record(v * 1000) // 1 µs … 100 ms, uniform
	}
	for _, q := range []float64{0.5, 0.99, 0.999} {
		got, want := float64(h.quantile(q)), q*100000*1000
		if math.Abs(got-want)/want > 0.02 {
			t.Errorf("q%.3f = %.0f, want %.0f ±2%%", q, got, want)
		}
	}
	for v := uint64(0); v < 1<<20; v += 7 {
		if b := bucketValue(bucket(v)); v >= 128 && math.Abs(float64(b)-float64(v))/float64(v) > 0.016 {
			t.Fatalf("bucket(%d) midpoint %d", v, b)
		}
	}
}

func TestReadResponse(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\nA;x=y\r\n0123456789\r\n0\r\n\r\n" +
		"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
	br := bufio.NewReader(strings.NewReader(raw))
	var buf []byte
	want := []struct {
		status int
		body   string
		close  bool
	}{{200, "hello", false}, {200, "abc0123456789", false}, {503, "{}", true}}
	for i, w := range want {
		var r response
		var err error
		r, buf, err = readResponse(br, buf)
		if err != nil || r.status != w.status || string(r.body) != w.body || r.close != w.close {
			t.Fatalf("response %d: %+v %q err %v", i, r, r.body, err)
		}
	}
}

func TestEchoRequestLengths(t *testing.T) {
	if len(BodyM) != 287 || len(BodyL) != 100 {
		t.Fatalf("bodies are %d and %d bytes, notes/peers.md says 287 and 100", len(BodyM), len(BodyL))
	}
	req := string(EchoRequest(ShapeM, "127.0.0.1:1", "/mcp"))
	for _, h := range []string{"MCP-Protocol-Version: 2026-07-28\r\n", "Mcp-Method: tools/call\r\n", "Mcp-Name: echo\r\n", "Content-Length: 287\r\n\r\n{"} {
		if !strings.Contains(req, h) {
			t.Errorf("request lacks %q", h)
		}
	}
}
