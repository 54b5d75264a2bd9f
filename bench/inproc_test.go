package bench_test

// In-process benchmarks of wymcp's request path (wire checks → parse →
// validate → actor → encode) through wymcp.Server.ServeHTTP, one per method,
// and of the bare handler the harness uses as its ceiling. No sockets: these
// isolate the library's own cost from the kernel's.
//
//	cd bench && go test -run '^$' -bench . -benchmem -count 5

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/bench/bareh"
	"github.com/wymcp/wymcp/bench/echotool"
	"github.com/wymcp/wymcp/bench/inproc"
	"github.com/wymcp/wymcp/bench/loadgen"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}`

func newServer(tb testing.TB) *wymcp.Server {
	tb.Helper()
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, nil, echotool.New())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv
}

type mcpReq struct {
	method, name, body, expect string
}

var cases = []mcpReq{
	{"server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`, `"supportedVersions"`},
	{"tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, `"name":"echo"`},
	{"tools/call", "echo", loadgen.BodyM, `"text":"hello"`},
}

// newRequest returns the request of c and the function that rewinds its
// body for the next iteration.
func newRequest(c mcpReq) (*http.Request, func()) { return inproc.Request(c.method, c.name, c.body) }

func check(tb testing.TB, c mcpReq, w *inproc.Sink) {
	tb.Helper()
	if w.Status != http.StatusOK || !strings.Contains(string(w.Body), c.expect) || strings.Contains(string(w.Body), `"error":`) {
		tb.Fatalf("%s: status %d body %s", c.method, w.Status, w.Body)
	}
}

// serveEach serves r through serve once an iteration, its body rewound
// first, and checks the last answer against c.
func serveEach(b *testing.B, serve http.HandlerFunc, r *http.Request, rewind func(), c mcpReq) {
	w := inproc.NewSink()
	b.ReportAllocs()
	for b.Loop() {
		rewind()
		w.Reset()
		serve(w, r)
	}
	check(b, c, w)
}

// BenchmarkWymcp is one request at a time, each method.
func BenchmarkWymcp(b *testing.B) {
	srv := newServer(b)
	for _, c := range cases {
		b.Run(strings.ReplaceAll(c.method, "/", "_"), func(b *testing.B) {
			r, rewind := newRequest(c)
			serveEach(b, srv.ServeHTTP, r, rewind, c)
		})
	}
}

// BenchmarkEras is tools/call echo on a server serving both eras
// (Options.Versions): a 2026-07-28 request, and a 2025-11-25 client's
// (no _meta, no Mcp-* headers), side by side.
func BenchmarkEras(b *testing.B) {
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"},
		&wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25", "2025-06-18"}}, echotool.New())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Shutdown(context.Background()) })
	legacy := func() (*http.Request, func()) {
		r, rewind := inproc.Request("tools/call", "echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		r.Header.Del("Mcp-Method")
		r.Header.Del("Mcp-Name")
		return r, rewind
	}
	for _, era := range []struct {
		name    string
		request func() (*http.Request, func())
	}{
		{"2026-07-28", func() (*http.Request, func()) { return inproc.Request("tools/call", "echo", loadgen.BodyM) }},
		{"2025-11-25", legacy},
	} {
		b.Run(era.name, func(b *testing.B) {
			r, rewind := era.request()
			serveEach(b, srv.ServeHTTP, r, rewind, mcpReq{method: "tools/call", expect: `"text":"hello"`})
		})
	}
}

// BenchmarkWymcpParallel runs tools/call from GOMAXPROCS goroutines, as a
// loaded server does (the actor hand-offs are then contended).
func BenchmarkWymcpParallel(b *testing.B) { parallel(b, newServer(b).ServeHTTP) }

// parallel runs tools/call through serve from GOMAXPROCS goroutines.
func parallel(b *testing.B, serve http.HandlerFunc) {
	c := cases[2]
	b.ReportAllocs()
	b.ResetTimer() // the server's construction is not the request's
	b.RunParallel(func(pb *testing.PB) {
		r, rewind := newRequest(c)
		w := inproc.NewSink()
		ran := false
		for pb.Next() {
			rewind()
			w.Reset()
			serve(w, r)
			ran = true
		}
		// With b.N below the goroutine count, some goroutines run none.
		if ran {
			check(b, c, w)
		}
	})
}

// BenchmarkWymcpRecorder is tools/call with httptest.NewRecorder per
// request, for comparison with handler benchmarks written that way.
func BenchmarkWymcpRecorder(b *testing.B) {
	srv := newServer(b)
	c := cases[2]
	r, rewind := newRequest(c)
	b.ReportAllocs()
	var rec *httptest.ResponseRecorder
	for b.Loop() {
		rewind()
		rec = httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
	}
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), c.expect) {
		b.Fatalf("status %d body %s", rec.Code, rec.Body)
	}
}

// BenchmarkBare is the harness's ceiling handler on the same tools/call body.
func BenchmarkBare(b *testing.B) {
	c := cases[2]
	r, rewind := newRequest(c)
	serveEach(b, bareh.Handler, r, rewind, c)
}

// BenchmarkBareParallel is the ceiling handler from GOMAXPROCS goroutines,
// beside BenchmarkWymcpParallel: how each scales with cores.
func BenchmarkBareParallel(b *testing.B) { parallel(b, bareh.Handler) }

// BenchmarkWymcpRounds is a two-round tools/call (SEP-2322) beside a plain
// one, through ServeHTTP: round1 is the first call, answered input_required
// with a sealed requestState (the handler asks one elicitation); round2 is
// the retry with the answer and that state, which the server opens (AES-GCM,
// binding recomputed), and the handler completes. Each is one request: a
// whole two-round call costs round1 + round2.
//
//	cd bench && GOWORK=off go test -run '^$' -bench WymcpRounds -benchmem -count 5
func BenchmarkWymcpRounds(b *testing.B) {
	form := protocol.ElicitRequest{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
	ask := tools.Must(tools.NewRaw("ask", "Asks a name, then echoes it.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var name protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("user_name", form, &name)); err != nil {
				return nil, err
			}
			return protocol.TextResult(string(name.Content)), nil
		}))
	echo := echotool.New()
	srv, err := wymcp.New(protocol.Implementation{Name: "rounds-wymcp", Version: "1.0.0"},
		&wymcp.Options{StateKeys: [][]byte{bytes.Repeat([]byte{7}, 32)}, StateTTL: time.Hour}, ask, echo)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Shutdown(context.Background()) })

	const caps = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}`
	round1 := mcpReq{"tools/call", "ask", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{},` + caps + `}}`, `"resultType":"input_required"`}
	// Round 1 once, for the state round 2 echoes (valid for StateTTL).
	r, _ := newRequest(round1)
	w := inproc.NewSink()
	srv.ServeHTTP(w, r)
	check(b, round1, w)
	var res struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body, &res); err != nil || res.Result.RequestState == "" {
		b.Fatalf("round 1: %v %s", err, w.Body)
	}
	round2 := mcpReq{"tools/call", "ask", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{},` +
		`"inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + res.Result.RequestState + `",` + caps + `}}`,
		`"resultType":"complete"`}

	for _, c := range []struct {
		name string
		req  mcpReq
	}{{"plain", cases[2]}, {"round1", round1}, {"round2", round2}} {
		b.Run(c.name, func(b *testing.B) {
			r, rewind := newRequest(c.req)
			serveEach(b, srv.ServeHTTP, r, rewind, c.req)
		})
	}
}
