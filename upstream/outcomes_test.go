package upstream_test

// One test per row of docs/design.md §10a, "The answer to every upstream
// outcome": each puts a fake upstream (an httptest.Server on 127.0.0.1
// that answers server/discover, tools/list and, for the 2025 era,
// initialize, and answers tools/call as the row needs) behind a gateway,
// calls the served tool g_t with mcptest, and asserts the exact
// downstream answer, the CLIENT span's error.type and, where the table
// has a breaker column, what the outcome does to the circuit breaker
// (ocBreakerEffect).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// ocHandler answers one tools/call: id is the request's JSON-RPC id as
// sent, body the whole request.
type ocHandler func(w http.ResponseWriter, r *http.Request, id string, body []byte)

// fakeUp is a scripted upstream MCP server with one tool, "t".
type fakeUp struct {
	t      testing.TB
	srv    *httptest.Server
	URL    string
	legacy bool // a 2025-11-25 server: initialize, sessions, no server/discover

	calls  atomic.Int32 // tools/call requests received
	inits  atomic.Int32 // initialize requests received
	others atomic.Int32 // anything else after Connect (the gateway's posts)
	// refuseInit makes initialize fail from now on.
	refuseInit atomic.Bool
	// down answers every request 502, as a proxy in front of a dead
	// server; probes counts the gateway's server/discover and ping after
	// Connect.
	down   atomic.Bool
	probes atomic.Int32
	// tool, when set, is the tool tools/list lists in place of t.
	tool string

	mu       sync.Mutex
	script   []ocHandler // the next tools/calls' answers, in order
	def      ocHandler   // once the script is spent
	sessions []string    // Mcp-Session-Id of each tools/call
	auths    []string    // Authorization of each tools/call
	deleted  []string    // Mcp-Session-Id of each DELETE
	bodies   []string    // each tools/call's body
}

// newFakeUp starts a fake upstream of the 2026-07-28 era, or of the 2025
// era when legacy. Its tools/calls are answered by script, in order, then
// by ocOK.
func newFakeUp(t testing.TB, legacy bool, script ...ocHandler) *fakeUp {
	t.Helper()
	f := &fakeUp{t: t, legacy: legacy, script: script, def: ocOK}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL
	return f
}

// then appends answers to the script.
func (f *fakeUp) then(hs ...ocHandler) {
	f.mu.Lock()
	f.script = append(f.script, hs...)
	f.mu.Unlock()
}

func (f *fakeUp) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		f.deleted = append(f.deleted, r.Header.Get("Mcp-Session-Id"))
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		f.t.Errorf("fake upstream: the gateway sent %q", body)
		return
	}
	id := string(m.ID)
	if m.Method == "server/discover" || m.Method == "ping" {
		f.probes.Add(1)
	}
	if f.down.Load() {
		if m.Method == "tools/call" {
			f.calls.Add(1)
		}
		ocStatus(502, "text/html", "<h1>502 Bad Gateway</h1>")(w, r, id, body)
		return
	}
	switch m.Method {
	case "server/discover":
		if f.legacy {
			ocWrite(w, http.StatusNotFound, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}}`)
	case "initialize":
		if !f.legacy || f.refuseInit.Load() {
			ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", f.inits.Add(1)))
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
	case "tools/list":
		rt := `"resultType":"complete",`
		if f.legacy {
			rt = ""
		}
		tool := f.tool
		if tool == "" {
			tool = `{"name":"t","inputSchema":{"type":"object"}}`
		}
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{`+rt+`"tools":[`+tool+`]}}`)
	case "tools/call":
		f.calls.Add(1)
		f.mu.Lock()
		h := f.def
		if len(f.script) > 0 {
			h, f.script = f.script[0], f.script[1:]
		}
		f.sessions = append(f.sessions, r.Header.Get("Mcp-Session-Id"))
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		f.bodies = append(f.bodies, string(body))
		f.mu.Unlock()
		h(w, r, id, body)
	default:
		f.others.Add(1)
		if m.ID == nil || m.Method == "" {
			w.WriteHeader(http.StatusAccepted) // a notification, or an answer of the gateway's
			return
		}
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

func (f *fakeUp) record() (sessions, auths, deleted, bodies []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sessions...), append([]string(nil), f.auths...),
		append([]string(nil), f.deleted...), append([]string(nil), f.bodies...)
}

func ocWrite(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// ocResult answers with the result object res.
func ocResult(res string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":`+res+`}`)
	}
}

// ocOK is a plain successful answer, whose text is "ok".
var ocOK = ocResult(`{"content":[{"type":"text","text":"ok"}]}`)

// ocRPCError answers with HTTP status and a JSON-RPC error object.
func ocRPCError(status int, errObj string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		ocWrite(w, status, `{"jsonrpc":"2.0","id":`+id+`,"error":`+errObj+`}`)
	}
}

// ocStatus answers with an HTTP status, a content type and a body.
func ocStatus(status int, contentType, body string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, _ string, _ []byte) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil // no sniffing: no Content-Type at all
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// ocBody answers 200 with a raw body; "{{id}}" is the request's id.
func ocBody(contentType, body string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		if contentType == "" {
			w.Header()["Content-Type"] = nil
		} else {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "{{id}}", id))
	}
}

// ocSSE answers with a text/event-stream of the frames, written and
// flushed one by one; "{{id}}" is the request's id.
func ocSSE(frames ...string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, fr := range frames {
			_, _ = io.WriteString(w, strings.ReplaceAll(fr, "{{id}}", id))
			_ = http.NewResponseController(w).Flush()
		}
	}
}

// ocHijack writes raw bytes on the connection ("{{id}}" is the request's
// id) and closes it: an answer cut off, or none at all.
func ocHijack(raw string) ocHandler {
	return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_, _ = buf.WriteString(strings.ReplaceAll(raw, "{{id}}", id))
		_ = buf.Flush()
		_ = conn.Close()
	}
}

// ocBlock signals entered, then waits for release or for its request's
// context to end (sending on cancelled then), then answers with ocOK.
func ocBlock(entered chan<- struct{}, release <-chan struct{}, cancelled chan<- struct{}) ocHandler {
	return func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
		if entered != nil {
			entered <- struct{}{}
		}
		select {
		case <-release:
			ocOK(w, r, id, body)
		case <-r.Context().Done():
			if cancelled != nil {
				cancelled <- struct{}{}
			}
		}
	}
}

// ocGateway is a wymcp server serving the tools of its upstreams; the
// CLIENT spans of upstream i go to spans[i].
type ocGateway struct {
	*mcptest.Endpoint
	ups   []*upstream.Upstream
	spans []*tracetest.SpanRecorder
}

// ocOpts are the Options of the fake upstream f: name "fake", prefix "g_",
// so that its tool is served as g_t.
func ocOpts(f *fakeUp) upstream.Options {
	return upstream.Options{Name: "fake", URL: f.URL, Prefix: "g_", Logger: slog.New(slog.DiscardHandler)}
}

// newOCGateway connects to the upstreams and serves their tools. Making a
// server is what costs (some 150 ms under -race): a test makes one, with
// as many upstreams as it needs (ocSet).
func newOCGateway(t testing.TB, wopts *wymcp.Options, ups ...upstream.Options) *ocGateway {
	t.Helper()
	g := &ocGateway{}
	var all []*tools.Tool
	for _, o := range ups {
		rec := tracetest.NewSpanRecorder()
		o.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		u, err := upstream.Connect(ctx, o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = u.Close() })
		g.ups = append(g.ups, u)
		g.spans = append(g.spans, rec)
		all = append(all, u.Tools()...)
	}
	s, err := wymcp.New(gatewayInfo, wopts, all...)
	if err != nil {
		t.Fatal(err)
	}
	g.Endpoint = mcptest.Serve(t, s, gatewayInfo)
	return g
}

// ocSet gathers the upstreams of one gateway, each under a prefix of its
// own.
type ocSet struct{ opts []upstream.Options }

// add adds the upstream o, under the prefix u<i>_ unless it has one, and
// returns its index and its tool's served name.
func (s *ocSet) add(o upstream.Options) (int, string) {
	i := len(s.opts)
	if o.Prefix == "" {
		o.Prefix = fmt.Sprintf("u%d_", i)
	}
	s.opts = append(s.opts, o)
	return i, o.Prefix + "t"
}

func (s *ocSet) start(t testing.TB, wopts *wymcp.Options) *ocGateway {
	t.Helper()
	return newOCGateway(t, wopts, s.opts...)
}

// call calls g_t with no arguments.
func (g *ocGateway) call(t testing.TB) mcptest.Reply {
	t.Helper()
	return g.callTool(t, "g_t")
}

// callTool calls the tool with no arguments.
func (g *ocGateway) callTool(t testing.TB, tool string) mcptest.Reply {
	t.Helper()
	return g.Send(t, mcptest.ToolCall(tool, `{}`))
}

// ocExpectText asserts a 200 tools/call result whose first text block is
// want and whose isError is isError.
func ocExpectText(t testing.TB, rep mcptest.Reply, want string, isError bool) {
	t.Helper()
	res := rep.ExpectResult(t, "1")
	text, isErr := mcptest.ToolText(t, res)
	if text != want || isErr != isError {
		t.Fatalf("answer %q (isError %v), want %q (isError %v)\nbody %s", text, isErr, want, isError, rep.Raw)
	}
}

// ocToolError asserts the tool error want: an isError result with want as
// its one text block.
func ocToolError(t testing.TB, rep mcptest.Reply, want string) {
	t.Helper()
	ocExpectText(t, rep, want, true)
	var res struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(rep.Msg.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("want one content block: %s", rep.Raw)
	}
}

// hops returns the error.type of each ended CLIENT span of upstream i
// ("-" when it has none), waiting up to 30 s for there to be n of them: the
// span of a call the client left may end after the test's last exchange.
func (g *ocGateway) hops(t testing.TB, i, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out []string
		for _, s := range g.spans[i].Ended() {
			if s.SpanKind() != trace.SpanKindClient {
				continue
			}
			et := "-"
			for _, kv := range s.Attributes() {
				if kv.Key == attribute.Key("error.type") {
					et = kv.Value.AsString()
				}
			}
			out = append(out, et)
		}
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(time.Millisecond)
	}
}

// expectHop asserts that the CLIENT spans of upstream i, all ended, are n
// and that the last one's error.type is want ("-": none).
func (g *ocGateway) expectHop(t testing.TB, i, n int, want string) {
	t.Helper()
	got := g.hops(t, i, n)
	if len(got) != n || got[n-1] != want {
		t.Fatalf("CLIENT spans' error.type %q, want %d spans, the last %q", got, n, want)
	}
}

// ocEffect is what an outcome does to the circuit breaker.
type ocEffect string

const (
	ocSuccess ocEffect = "success" // counted, as a success
	ocFailure ocEffect = "failure" // counted, as a failure of the upstream
	ocNeutral ocEffect = "—"       // neither
)

// breaker adds an upstream that measures what the outcome answered by row
// does to the breaker: whether its window counts the call as a success, a
// failure of the upstream, or neither. adjust, when not nil, changes the
// Options. The returned function measures, once the gateway has started.
func (s *ocSet) breaker(t *testing.T, legacy bool, adjust func(*upstream.Options), row ...ocHandler) func(*testing.T, *ocGateway) ocEffect {
	f := newFakeUp(t, legacy, row...)
	o := ocOpts(f)
	o.Prefix = fmt.Sprintf("b%d_", len(s.opts))
	if adjust != nil {
		adjust(&o)
	}
	i, tool := s.add(o)
	return func(t *testing.T, g *ocGateway) ocEffect {
		t.Helper()
		calls, failures := upstream.BreakerCounts(g.ups[i])
		g.callTool(t, tool) // the row
		calls2, failures2 := upstream.BreakerCounts(g.ups[i])
		switch {
		case failures2 > failures:
			return ocFailure
		case calls2 > calls:
			return ocSuccess
		}
		return ocNeutral
	}
}

func ocExpectEffect(t *testing.T, got, want ocEffect) {
	t.Helper()
	if got != want {
		t.Errorf("breaker: the outcome is a %s, want %s", got, want)
	}
}

// ocUnavailable asserts the unavailable tool error, its wait more than
// least and at most most.
func ocUnavailable(t testing.TB, rep mcptest.Reply, least, most time.Duration) {
	t.Helper()
	const prefix = "Upstream fake is unavailable; the gateway will try it again in "
	text, isErr := mcptest.ToolText(t, rep.ExpectResult(t, "1"))
	wait, ok := strings.CutPrefix(text, prefix)
	if ok {
		wait, ok = strings.CutSuffix(wait, ".")
	}
	d, err := time.ParseDuration(wait)
	if !isErr || !ok || err != nil || d <= least || d > most {
		t.Fatalf("answer %q, want %s<wait in (%v, %v]>.", text, prefix, least, most)
	}
}

// Row: a result: the result, spliced (isError as the upstream set it);
// error.type none; breaker success.
func TestOutcomeResult(t *testing.T) {
	t.Parallel()
	// Members in an odd order with white space inside values, an unknown
	// member, the upstream's resultType and _meta: every member but
	// resultType and _meta is copied as written, and the upstream's _meta
	// members but serverInfo are kept beside the gateway's serverInfo.
	const upstreamResult = `{ "structuredContent" : {"n": 1, "s":"\u00e9"},"x-extra":[1, 2] ,"resultType":"complete","content":[{"type":"text","text":"hi \"there\""}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"},"example.com/trace":{"v":true},"k":"v"}}`
	var set ocSet
	f := newFakeUp(t, false, ocResult(upstreamResult), ocResult(upstreamResult))
	set.add(ocOpts(f))
	old := newFakeUp(t, true, ocResult(`{"content":[{"type":"text","text":"old"}]}`))
	oldOpts := ocOpts(old)
	oldOpts.Prefix = "l_"
	iOld, _ := set.add(oldOpts)
	measure := set.breaker(t, false, nil, ocOK)
	g := set.start(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25", "2025-06-18"}})

	rep := g.call(t)
	ocExpectText(t, rep, `hi "there"`, false)
	want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","structuredContent":{"n": 1, "s":"\u00e9"},"x-extra":[1, 2],"content":[{"type":"text","text":"hi \"there\""}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gateway","version":"1.0.0"},"example.com/trace":{"v":true},"k":"v"}}}`
	if string(rep.Raw) != want {
		t.Errorf("spliced answer:\n got %s\nwant %s", rep.Raw, want)
	}
	g.expectHop(t, 0, 1, "-")

	// A 2025-era client gets its era's shape: no resultType, no
	// serverInfo, the upstream's other _meta members kept.
	status, body := g.Post(t, context.Background(), mcptest.RPC{
		Body:    `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"g_t","arguments":{}}}`,
		Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"},
	})
	want = `{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"n": 1, "s":"\u00e9"},"x-extra":[1, 2],"content":[{"type":"text","text":"hi \"there\""}],"_meta":{"example.com/trace":{"v":true},"k":"v"}}}`
	if status != 200 || body != want {
		t.Errorf("2025-era answer: %d\n got %s\nwant %s", status, body, want)
	}

	// A 2025-era upstream's result has no resultType: the gateway's is
	// added.
	if v := g.ups[iOld].Version(); v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}
	rep = g.callTool(t, "l_t")
	want = `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"old"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gateway","version":"1.0.0"}}}}`
	if string(rep.Raw) != want {
		t.Errorf("from a 2025-era upstream:\n got %s\nwant %s", rep.Raw, want)
	}
	g.expectHop(t, iOld, 1, "-")

	ocExpectEffect(t, measure(t, g), ocSuccess)
}

// Row: a result with isError: passed through, its text untouched;
// error.type tool_error; breaker success.
func TestOutcomeResultIsError(t *testing.T) {
	t.Parallel()
	const text = "The city \"Atlantis\" was not found.\nTry another."
	res := `{"content":[{"type":"text","text":` + mcptest.Quote(text) + `}],"isError":true}`
	var set ocSet
	set.add(ocOpts(newFakeUp(t, false, ocResult(res))))
	measure := set.breaker(t, false, nil, ocResult(res))
	g := set.start(t, nil)

	rep := g.call(t)
	ocToolError(t, rep, text)
	want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"The city \"Atlantis\" was not found.\nTry another."}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"gateway","version":"1.0.0"}}}}`
	if string(rep.Raw) != want {
		t.Errorf("\n got %s\nwant %s", rep.Raw, want)
	}
	g.expectHop(t, 0, 1, "tool_error")
	ocExpectEffect(t, measure(t, g), ocSuccess)
}

// Row: input_required (2026-07-28): answered input_required with the
// upstream's inputRequests and the gateway's own sealed requestState; the
// retry sends the upstream its requestState exactly as it gave it;
// error.type none; breaker success.
func TestOutcomeInputRequired(t *testing.T) {
	t.Parallel()
	const params = `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	const upState = "upstream-state: \"opaque\" é"
	ask := ocResult(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":` + params + `}},"requestState":` + mcptest.Quote(upState) + `}`)
	const responses = `{"who":{"action":"accept","content":{"name":"Ada"}}}`
	var retry struct {
		Params struct {
			InputResponses json.RawMessage `json:"inputResponses"`
			RequestState   *string         `json:"requestState"`
		} `json:"params"`
	}
	answer := func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
		if err := json.Unmarshal(body, &retry); err != nil {
			t.Errorf("retry: %v", err)
		}
		ocResult(`{"content":[{"type":"text","text":"hello Ada"}]}`)(w, r, id, body)
	}
	var set ocSet
	set.add(ocOpts(newFakeUp(t, false, ask, answer)))
	measure := set.breaker(t, false, nil, ask)
	g := set.start(t, nil)

	caps := `{"elicitation":{}}`
	rep := g.Send(t, mcptest.ToolCall("g_t", `{}`).WithCapabilities(caps))
	inputs, state := rep.ExpectInputRequired(t, "1")
	if len(inputs) != 1 || inputs["who"].Method != "elicitation/create" || mcptest.CompactJSON(t, string(inputs["who"].Params)) != mcptest.CompactJSON(t, params) {
		t.Fatalf("inputRequests: %s", rep.Raw)
	}
	if state == upState || strings.Contains(state, "opaque") {
		t.Errorf("the upstream's requestState reached the client as it is: %q", state)
	}
	g.expectHop(t, 0, 1, "-")

	rep = g.Send(t, mcptest.ToolCall("g_t", `{}`).WithCapabilities(caps).Retry(responses, state))
	ocExpectText(t, rep, "hello Ada", false)
	if retry.Params.RequestState == nil || *retry.Params.RequestState != upState {
		t.Errorf("the upstream got requestState %v, want %q", retry.Params.RequestState, upState)
	}
	if string(retry.Params.InputResponses) != responses {
		t.Errorf("the upstream got inputResponses %s, want %s", retry.Params.InputResponses, responses)
	}
	ocExpectEffect(t, measure(t, g), ocSuccess)
}

// ocRow is one variant of a row: the upstream's answer and the tool error
// it must get; runRows serves every variant, and its breaker measure,
// through one gateway.
type ocRow struct {
	name   string
	legacy bool
	answer ocHandler
	want   string   // the tool error's text
	hop    string   // the CLIENT span's error.type
	effect ocEffect // on the breaker
	adjust func(*upstream.Options)
}

func runRows(t *testing.T, rows []ocRow) {
	t.Helper()
	var set ocSet
	type served struct {
		i       int
		tool    string
		measure func(*testing.T, *ocGateway) ocEffect
	}
	var all []served
	for _, r := range rows {
		o := ocOpts(newFakeUp(t, r.legacy, r.answer))
		o.Prefix = ""
		if r.adjust != nil {
			r.adjust(&o)
		}
		i, tool := set.add(o)
		all = append(all, served{i, tool, set.breaker(t, r.legacy, r.adjust, r.answer)})
	}
	g := set.start(t, nil)
	for k, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s := all[k]
			ocToolError(t, g.callTool(t, s.tool), r.want)
			g.expectHop(t, s.i, 1, r.hop)
			ocExpectEffect(t, s.measure(t, g), r.effect)
		})
	}
}

// Row: input_required from a 2025-era upstream, asking for a method that
// is no input request, or with a requestState past 64 KiB: the malformed
// tool error; upstream_malformed; breaker failure.
func TestOutcomeInputRequiredUnreadable(t *testing.T) {
	t.Parallel()
	runRows(t, []ocRow{
		{name: "2025-era upstream", legacy: true,
			answer: ocResult(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{}}},"requestState":"s"}`),
			want:   "Upstream fake sent an answer the gateway cannot read: a 2025-era upstream answered input_required.",
			hop:    "upstream_malformed", effect: ocFailure},
		{name: "not an input request",
			answer: ocResult(`{"resultType":"input_required","inputRequests":{"k":{"method":"tools/call","params":{}}}}`),
			want:   `Upstream fake sent an answer the gateway cannot read: inputRequests["k"] asks for "tools/call", which is not an input request.`,
			hop:    "upstream_malformed", effect: ocFailure},
		{name: "requestState past its limit",
			answer: ocResult(`{"resultType":"input_required","inputRequests":{"who":{"method":"elicitation/create","params":{}}},"requestState":"` + strings.Repeat("s", 64<<10+1) + `"}`),
			want:   "Upstream fake sent an answer the gateway cannot read: its requestState is 65537 bytes, more than the gateway's limit of 65536.",
			hop:    "upstream_malformed", effect: ocFailure},
	})
}

// Row: JSON-RPC error -32602 or -32021: that error, code, message and data
// as the upstream sent them (-32021: HTTP 400); error.type the code;
// breaker success.
func TestOutcomeRPCErrorPassedThrough(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		upstreamStatus int
		errObj         string
		status, code   int
	}{
		{"-32602", 200, `{"code":-32602,"message":"Invalid params: x must be a number","data":{"path":"/x","got":"\"a\""}}`, 200, -32602},
		{"-32602 with HTTP 400", 400, `{"code":-32602,"message":"Unknown tool","data":[1,2]}`, 200, -32602},
		{"-32602 without data", 200, `{"code":-32602,"message":"Bad"}`, 200, -32602},
		{"-32021", 400, `{"code":-32021,"message":"This tool needs elicitation","data":{"requiredCapabilities":["elicitation"]}}`, 400, -32021},
	}
	var set ocSet
	var measures []func(*testing.T, *ocGateway) ocEffect
	for _, c := range cases {
		o := ocOpts(newFakeUp(t, false, ocRPCError(c.upstreamStatus, c.errObj)))
		o.Prefix = ""
		set.add(o)
		measures = append(measures, set.breaker(t, false, nil, ocRPCError(c.upstreamStatus, c.errObj)))
	}
	g := set.start(t, nil)
	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := g.callTool(t, fmt.Sprintf("u%d_t", 2*k))
			rep.ExpectError(t, c.status, c.code, "1")
			if want := `{"jsonrpc":"2.0","id":1,"error":` + c.errObj + `}`; string(rep.Raw) != want {
				t.Errorf("\n got %s\nwant %s", rep.Raw, want)
			}
			g.expectHop(t, 2*k, 1, fmt.Sprint(c.code))
			ocExpectEffect(t, measures[k](t, g), ocSuccess)
		})
	}
}

// Row: any other JSON-RPC error: the tool error naming its code and
// message; error.type the code; breaker success.
func TestOutcomeRPCErrorOther(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 300) // 600 bytes: cut at 512, on a rune boundary
	row := func(name, raw, want, code string) ocRow {
		return ocRow{name: name, answer: ocBody("application/json", raw), want: want, hop: code, effect: ocSuccess}
	}
	runRows(t, []ocRow{
		row("-32603", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32603,"message":"boom","data":{"secret":"not shown"}}}`,
			"Upstream fake failed the call with JSON-RPC error -32603: boom", "-32603"),
		row("-32601", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32601,"message":"Method not found"}}`,
			"Upstream fake failed the call with JSON-RPC error -32601: Method not found", "-32601"),
		row("a server's own code", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":1234,"message":"quota \"exceeded\""}}`,
			`Upstream fake failed the call with JSON-RPC error 1234: quota "exceeded"`, "1234"),
		row("null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			"Upstream fake failed the call with JSON-RPC error -32700: Parse error", "-32700"),
		row("long message", `{"jsonrpc":"2.0","id":{{id}},"error":{"code":-32000,"message":"`+long+`"}}`,
			"Upstream fake failed the call with JSON-RPC error -32000: "+strings.Repeat("é", 256)+"…", "-32000"),
		{name: "in an event of a stream",
			answer: ocSSE(`data: {"jsonrpc":"2.0","id":{{id}},"error":{"code":-32603,"message":"boom"}}` + "\n\n"),
			want:   "Upstream fake failed the call with JSON-RPC error -32603: boom", hop: "-32603", effect: ocSuccess},
		// A JSON-RPC error is the answer whatever the HTTP status.
		{name: "with HTTP 500", answer: ocRPCError(500, `{"code":-32603,"message":"boom"}`),
			want: "Upstream fake failed the call with JSON-RPC error -32603: boom", hop: "-32603", effect: ocSuccess},
	})
}

// ocTokenServer is a token endpoint: it answers tok-1, tok-2, … until
// refuse is set, then 400 invalid_client.
type ocTokenServer struct {
	URL     string
	fetches atomic.Int32
	refuse  atomic.Bool
	asked   atomic.Int32 // every request, refused or not
}

func newOCTokenServer(t *testing.T) *ocTokenServer {
	ts := &ocTokenServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.asked.Add(1)
		if ts.refuse.Load() {
			ocWrite(w, 400, `{"error":"invalid_client"}`)
			return
		}
		n := ts.fetches.Add(1)
		ocWrite(w, 200, fmt.Sprintf(`{"access_token":"tok-%d","token_type":"Bearer","expires_in":3600}`, n))
	}))
	t.Cleanup(srv.Close)
	ts.URL = srv.URL
	return ts
}

func ocClientCredentials(t *testing.T, tokenURL string) upstream.Credentials {
	creds, err := upstream.ClientCredentials(upstream.OAuth{TokenURL: tokenURL, ClientID: "gw", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// Row: HTTP 401 (after one retry with fresh credentials): the tool error;
// upstream_unauthorized; breaker neutral.
func TestOutcomeUnauthorized(t *testing.T) {
	t.Parallel()
	const want = "Upstream fake refused the gateway's credentials (HTTP 401)."
	unauthorized := ocStatus(401, "application/json", `{"error":"invalid_token"}`)

	var set ocSet
	none := newFakeUp(t, false, unauthorized)
	set.add(ocOpts(none))
	measure := set.breaker(t, false, nil, unauthorized)

	ts := newOCTokenServer(t)
	cc := newFakeUp(t, false, unauthorized, unauthorized)
	ccOK := newFakeUp(t, false, unauthorized, ocOK)
	o := ocOpts(cc)
	o.Prefix, o.Credentials = "cc_", ocClientCredentials(t, ts.URL)
	iCC, _ := set.add(o)
	tsOK := newOCTokenServer(t)
	o = ocOpts(ccOK)
	o.Prefix, o.Credentials = "ok_", ocClientCredentials(t, tsOK.URL)
	set.add(o)

	path := t.TempDir() + "/headers"
	if err := os.WriteFile(path, []byte("Authorization: Bearer static\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds, err := upstream.StaticHeaders(path)
	if err != nil {
		t.Fatal(err)
	}
	static := newFakeUp(t, false, unauthorized, unauthorized)
	o = ocOpts(static)
	o.Prefix, o.Credentials = "st_", creds
	set.add(o)

	g := set.start(t, nil)

	t.Run("no credentials: no retry", func(t *testing.T) {
		ocToolError(t, g.call(t), want)
		if n := none.calls.Load(); n != 1 {
			t.Errorf("%d requests, want 1: without credentials there is nothing fresh to retry with", n)
		}
		g.expectHop(t, 0, 1, "upstream_unauthorized")
		ocExpectEffect(t, measure(t, g), ocNeutral)
	})

	t.Run("client credentials: one retry with a new token", func(t *testing.T) {
		ocToolError(t, g.callTool(t, "cc_t"), want)
		g.expectHop(t, iCC, 1, "upstream_unauthorized")
		_, auths, _, _ := cc.record()
		// Connect's token, refused, then a new one, refused too.
		if strings.Join(auths, ",") != "Bearer tok-1,Bearer tok-2" {
			t.Errorf("Authorization of each call: %q", auths)
		}
		if n := ts.fetches.Load(); n != 2 {
			t.Errorf("%d token requests, want 2 (Connect's, then one for the 401)", n)
		}
		// The retry with a new token is what makes a call work.
		ocExpectText(t, g.callTool(t, "ok_t"), "ok", false)
		_, auths, _, _ = ccOK.record()
		if strings.Join(auths, ",") != "Bearer tok-1,Bearer tok-2" {
			t.Errorf("Authorization of each call: %q", auths)
		}
	})

	t.Run("static headers", func(t *testing.T) {
		ocToolError(t, g.callTool(t, "st_t"), want)
		// StaticHeaders has no other value to try, yet call() retries a
		// 401 once whenever there are Credentials: the same header goes
		// twice.
		_, auths, _, _ := static.record()
		if strings.Join(auths, ",") != "Bearer static" {
			t.Errorf("Authorization of each call: %q", auths)
		}
	})
}

// Row: HTTP 404 on a session (after one new session): the tool error;
// upstream_session_lost; breaker neutral.
func TestOutcomeSessionLost(t *testing.T) {
	t.Parallel()
	const want = "Upstream fake lost its session, and a new one could not be made."
	lost := ocStatus(404, "text/plain", "no such session")
	entered, release := make(chan struct{}), make(chan struct{})
	held := func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
		entered <- struct{}{}
		<-release
		lost(w, r, id, body)
	}

	var set ocSet
	renewed := newFakeUp(t, true, lost)
	o := ocOpts(renewed)
	o.Prefix = "r_"
	iRenewed, _ := set.add(o)
	persistent := newFakeUp(t, true, lost, lost)
	o = ocOpts(persistent)
	o.Prefix = "p_"
	iPersistent, _ := set.add(o)
	measure := set.breaker(t, true, nil, lost, lost)
	cannot := newFakeUp(t, true, lost)
	o = ocOpts(cannot)
	o.Prefix = "c_"
	iCannot, _ := set.add(o)
	shared := newFakeUp(t, true, held, held)
	o = ocOpts(shared)
	o.Prefix = "s_"
	set.add(o)
	g := set.start(t, nil)

	t.Run("renewed once", func(t *testing.T) {
		ocExpectText(t, g.callTool(t, "r_t"), "ok", false)
		sessions, _, _, _ := renewed.record()
		if strings.Join(sessions, ",") != "s1,s2" || renewed.inits.Load() != 2 {
			t.Errorf("sessions of the calls %q, %d initialize", sessions, renewed.inits.Load())
		}
		g.expectHop(t, iRenewed, 1, "-")
		// Closing ends the current session.
		if err := g.ups[iRenewed].Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, deleted, _ := renewed.record(); strings.Join(deleted, ",") != "s2" {
			t.Errorf("DELETE of sessions %q, want s2", deleted)
		}
	})

	t.Run("persistent", func(t *testing.T) {
		ocToolError(t, g.callTool(t, "p_t"), want)
		if n, i := persistent.calls.Load(), persistent.inits.Load(); n != 2 || i != 2 {
			t.Errorf("%d calls, %d initialize; want 2 and 2", n, i)
		}
		g.expectHop(t, iPersistent, 1, "upstream_session_lost")
		ocExpectEffect(t, measure(t, g), ocNeutral)
	})

	t.Run("the new session cannot be made", func(t *testing.T) {
		cannot.refuseInit.Store(true)
		ocToolError(t, g.callTool(t, "c_t"), want)
		if n := cannot.calls.Load(); n != 1 {
			t.Errorf("%d calls, want 1", n)
		}
		g.expectHop(t, iCannot, 1, "upstream_session_lost")
	})

	t.Run("one new session for many calls", func(t *testing.T) {
		reps := make(chan mcptest.Reply, 2)
		for range 2 {
			go func() { reps <- g.callTool(t, "s_t") }()
		}
		<-entered
		<-entered
		close(release)
		for range 2 {
			ocExpectText(t, <-reps, "ok", false)
		}
		if i := shared.inits.Load(); i != 2 {
			t.Errorf("%d initialize, want 2: the calls that lost one session share the next", i)
		}
	})
}

// Row: another HTTP status ≥ 300 without a JSON-RPC error body: the tool
// error naming it; error.type the status; breaker failure if ≥ 500.
func TestOutcomeHTTPStatus(t *testing.T) {
	t.Parallel()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the gateway followed a redirect")
	}))
	t.Cleanup(elsewhere.Close)
	redirect := func(w http.ResponseWriter, r *http.Request, _ string, _ []byte) {
		http.Redirect(w, r, elsewhere.URL, http.StatusTemporaryRedirect)
	}
	row := func(name string, answer ocHandler, status int, effect ocEffect) ocRow {
		return ocRow{name: name, answer: answer, want: fmt.Sprintf("Upstream fake answered HTTP %d.", status), hop: fmt.Sprint(status), effect: effect}
	}
	runRows(t, []ocRow{
		row("503", ocStatus(503, "text/plain", "overloaded"), 503, ocFailure),
		row("500 empty", ocStatus(500, "", ""), 500, ocFailure),
		row("502 JSON not JSON-RPC", ocStatus(502, "application/json", `{"message":"bad gateway"}`), 502, ocFailure),
		row("500 event stream", ocStatus(500, "text/event-stream", "data: {}\n\n"), 500, ocFailure),
		row("429", ocStatus(429, "text/plain", "slow down"), 429, ocNeutral),
		row("400 not JSON", ocStatus(400, "application/json", `not json`), 400, ocNeutral),
		row("403", ocStatus(403, "text/html", "<h1>no</h1>"), 403, ocNeutral),
		row("307 not followed", redirect, 307, ocNeutral),
		row("300", ocStatus(300, "application/json", `{}`), 300, ocNeutral),
	})
}

// Row: connection refused, reset: "is unreachable"; upstream_unreachable;
// breaker failure.
func TestOutcomeUnreachable(t *testing.T) {
	t.Parallel()
	const want = "Upstream fake is unreachable."
	refused := newFakeUp(t, false)
	o := ocOpts(refused)
	o.Prefix = "r_"
	var set ocSet
	iRefused, _ := set.add(o)
	rows := []ocRow{
		{name: "closed before answering", answer: ocHijack("")},
		{name: "closed in the headers", answer: ocHijack("HTTP/1.1 200 OK\r\nContent-Type: appl")},
		{name: "closed in a JSON body", answer: ocHijack("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":{{id}},")},
		{name: "closed in a chunked JSON body", answer: ocHijack("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"jso")},
	}
	for i := range rows {
		rows[i].want, rows[i].hop, rows[i].effect = want, "upstream_unreachable", ocFailure
	}
	t.Run("connection refused", func(t *testing.T) {
		g := set.start(t, nil)
		refuse(t, refused.srv)
		ocToolError(t, g.callTool(t, "r_t"), want)
		g.expectHop(t, iRefused, 1, "upstream_unreachable")
		// A failure of the upstream, counted once although the call,
		// which never reached it, was tried on a fresh connection too.
		if calls, failures := upstream.BreakerCounts(g.ups[iRefused]); calls != 1 || failures != 1 {
			t.Errorf("the breaker counted %d calls, %d failures; want 1, 1", calls, failures)
		}
	})
	runRows(t, rows)
}

// Row: not JSON-RPC; no answer to the request; a stream that ends first;
// an unknown Content-Type; a result that does not read: the malformed
// tool error with its reason; upstream_malformed; breaker failure.
func TestOutcomeMalformed(t *testing.T) {
	t.Parallel()
	const ctJSON = "application/json"
	res := func(result string) ocHandler {
		return ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}},"result":`+result+`}`)
	}
	const ended = "the stream ended without an answer"
	rows := []ocRow{
		{name: "not JSON", answer: ocBody(ctJSON, `<html>hello</html>`), want: "not a JSON-RPC 2.0 message"},
		{name: "two JSON values", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}} {}`), want: "not a JSON-RPC 2.0 message"},
		{name: "JSON, not JSON-RPC", answer: ocBody(ctJSON, `{"content":[{"type":"text","text":"hi"}]}`), want: "not a JSON-RPC 2.0 message"},
		{name: "jsonrpc 1.0", answer: ocBody(ctJSON, `{"jsonrpc":"1.0","id":{{id}},"result":{"content":[]}}`), want: "not a JSON-RPC 2.0 message"},
		{name: "an array", answer: ocBody(ctJSON, `[{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}}]`), want: "not a JSON-RPC 2.0 message"},
		{name: "result and error", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]},"error":{"code":1,"message":"x"}}`), want: "a response has exactly one of result and error"},
		{name: "neither result nor error", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}}}`), want: "a response has exactly one of result and error"},
		{name: "no id", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","result":{"content":[]}}`), want: "a response without an id"},
		{name: "fractional id", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":1.5,"result":{"content":[]}}`), want: "the id is neither a string nor an integer"},
		{name: "error without a code", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}},"error":{"message":"x"}}`), want: "the error is not an object with an integer code and a string message"},
		{name: "wrong id", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":999999,"result":{"content":[]}}`), want: "the answer is not a response to the request"},
		{name: "string id", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":"{{id}}","result":{"content":[]}}`), want: "the answer is not a response to the request"},
		{name: "a request, not an answer", answer: ocBody(ctJSON, `{"jsonrpc":"2.0","id":{{id}},"method":"ping"}`), want: "the answer is not a response to the request"},
		{name: "text/plain", answer: ocBody("text/plain", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}}`), want: `the answer's Content-Type is "text/plain"`},
		{name: "no Content-Type", answer: ocBody("", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[]}}`), want: `the answer's Content-Type is ""`},
		{name: "result without content", answer: res(`{"structuredContent":{"a":1}}`), want: "a complete result has no content array"},
		{name: "_meta not an object", answer: res(`{"content":[],"_meta":null}`), want: "_meta is not an object"},
		{name: "content not an array", answer: res(`{"content":{"type":"text","text":"x"}}`), want: "content is not an array"},
		{name: "isError not a boolean", answer: res(`{"content":[],"isError":"yes"}`), want: "isError is not a boolean"},
		{name: "unknown resultType", answer: res(`{"resultType":"partial","content":[]}`), want: `resultType is neither "complete" nor "input_required"`},
		{name: "result not an object", answer: res(`[{"type":"text","text":"x"}]`), want: "the result is not an object"},
		// The message's parser refuses a repeated name at any depth.
		{name: "repeated member", answer: res(`{"content":[],"content":[]}`), want: "not a JSON-RPC 2.0 message"},
		{name: "input_required without requests", answer: res(`{"resultType":"input_required"}`), want: "an input_required result has neither inputRequests nor requestState"},
		{name: "stream ends without an answer", answer: ocSSE(
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"), want: ended},
		{name: "stream answers another request", answer: ocSSE(
			"data: {\"jsonrpc\":\"2.0\",\"id\":999999,\"result\":{\"content\":[]}}\n\n"), want: ended},
		{name: "stream ends inside an event", answer: ocSSE(
			"data: {\"jsonrpc\":\"2.0\",\"id\":{{id}},\"result\":{\"content\":[]}}\n"), want: ended},
		{name: "stream cut off", answer: ocHijack("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata: "), want: ended},
		{name: "an event not JSON", answer: ocSSE("data: hello\n\n"), want: "an event of the stream: not a JSON-RPC 2.0 message"},
		{name: "a stream's result without content", answer: ocSSE(`data: {"jsonrpc":"2.0","id":{{id}},"result":{}}` + "\n\n"), want: "a complete result has no content array"},
	}
	for i := range rows {
		rows[i].want = "Upstream fake sent an answer the gateway cannot read: " + rows[i].want + "."
		rows[i].hop, rows[i].effect = "upstream_malformed", ocFailure
	}
	runRows(t, rows)
}

// ocCounting counts the bytes the gateway reads of each tools/call
// answer's body.
type ocCounting struct{ read atomic.Int64 }

func (c *ocCounting) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Header.Get("Mcp-Method") != "tools/call" {
		return resp, err
	}
	resp.Body = &ocCountingBody{ReadCloser: resp.Body, n: &c.read}
	return resp, nil
}

type ocCountingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *ocCountingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// Row: one message larger than MaxResponseBytes: the tool error naming the
// limit; upstream_too_large; breaker neutral. The answer is read up to the
// limit and no further: the upstream, writing 50 MB, sees the connection
// closed long before it is done.
func TestOutcomeTooLarge(t *testing.T) {
	t.Parallel()
	const (
		limit = 1024
		huge  = 50 << 20
		want  = "Upstream fake's answer is larger than 1024 bytes, the gateway's limit."
	)
	// flood writes head, then filler until huge bytes or a write fails;
	// done gets how many bytes it wrote.
	flood := func(contentType, head string, filler []byte, done chan<- int) ocHandler {
		return func(w http.ResponseWriter, _ *http.Request, id string, _ []byte) {
			w.Header().Set("Content-Type", contentType)
			written, err := io.WriteString(w, strings.ReplaceAll(head, "{{id}}", id))
			for err == nil && written < huge {
				var n int
				n, err = w.Write(filler)
				written += n
			}
			done <- written
		}
	}
	line := []byte(strings.Repeat("a", 32<<10))
	cases := []struct {
		name   string
		ct     string
		head   string
		filler []byte
	}{
		{"JSON body", "application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"`, line},
		{"one line of an event", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: ", line},
		{"many lines of an event", "text/event-stream", "", []byte(strings.Repeat("data: "+strings.Repeat("b", 90)+"\n", 300))},
	}
	var set ocSet
	done := make([]chan int, len(cases))
	counts := make([]*ocCounting, len(cases))
	for k, c := range cases {
		done[k], counts[k] = make(chan int, 1), &ocCounting{}
		o := ocOpts(newFakeUp(t, false, flood(c.ct, c.head, c.filler, done[k])))
		o.Prefix, o.MaxResponseBytes = "", limit
		o.HTTPClient = &http.Client{Transport: counts[k]}
		set.add(o)
	}
	big := ocBody("application/json", `{"jsonrpc":"2.0","id":{{id}},"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 2*limit)+`"}]}}`)
	measure := set.breaker(t, false, func(o *upstream.Options) { o.MaxResponseBytes = limit }, big)
	g := set.start(t, nil)

	for k, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			ocToolError(t, g.callTool(t, fmt.Sprintf("u%d_t", k)), want)
			g.expectHop(t, k, 1, "upstream_too_large")
			select {
			case written := <-done[k]:
				if written >= huge {
					t.Errorf("the upstream wrote all %d bytes: the gateway read them", written)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream is still writing: the gateway did not close the answer")
			}
			// The gateway read at most the limit and a buffer's worth.
			if n := counts[k].read.Load(); n > limit+8<<10 {
				t.Errorf("the gateway read %d bytes of the answer, limit %d", n, limit)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	ocExpectEffect(t, measure(t, g), ocNeutral)
}

// Row: the call's deadline passes: the one timeout answer, "Tool <served>
// timed out after <d>"; error.type timeout; the upstream request is
// cancelled; breaker neutral.
func TestOutcomeDeadline(t *testing.T) {
	t.Parallel()
	entered, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	var set ocSet
	o := ocOpts(newFakeUp(t, false, ocBlock(entered, nil, cancelled)))
	o.CallTimeout = 200 * time.Millisecond
	set.add(o)
	measure := set.breaker(t, false, func(o *upstream.Options) { o.CallTimeout = 200 * time.Millisecond }, ocBlock(nil, nil, nil))
	g := set.start(t, nil)

	start := time.Now()
	ocToolError(t, g.call(t), "Tool g_t timed out after 200ms")
	if d := time.Since(start); d < 200*time.Millisecond || d > 30*time.Second {
		t.Errorf("answered after %v", d)
	}
	<-entered
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
	g.expectHop(t, 0, 1, "timeout")
	ocExpectEffect(t, measure(t, g), ocNeutral)
}

// Row: the client goes away: the upstream request is cancelled, nobody
// reads the answer; error.type cancelled; breaker neutral.
func TestOutcomeClientGone(t *testing.T) {
	t.Parallel()
	entered, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	o := ocOpts(newFakeUp(t, false, ocBlock(entered, nil, cancelled)))
	g := newOCGateway(t, nil, o)
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { gone <- g.Abandon(ctx, mcptest.ToolCall("g_t", `{}`)) }()
	<-entered
	cancel()
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
	if err := <-gone; err == nil {
		t.Error("the abandoned call was answered")
	}
	g.expectHop(t, 0, 1, "cancelled")
	// It said nothing of the upstream's health.
	if calls, failures := upstream.BreakerCounts(g.ups[0]); calls != 0 || failures != 0 {
		t.Errorf("the breaker counted %d calls, %d failures; want none", calls, failures)
	}
	ocExpectText(t, g.call(t), "ok", false)
}

// Row: credentials cannot be had: the tool error with why; error.type
// upstream_credentials; breaker neutral. Connect needs a token, so the
// token endpoint fails after it: the upstream's 401 drops the cached
// token, and no fresh one can be had.
func TestOutcomeCredentials(t *testing.T) {
	t.Parallel()
	var set ocSet
	ts := newOCTokenServer(t)
	refusing := newFakeUp(t, false, ocStatus(401, "text/plain", ""))
	o := ocOpts(refusing)
	o.Credentials = ocClientCredentials(t, ts.URL)
	set.add(o)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tokenURL := "http://" + ln.Addr().String() + "/token"
	tokens := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ocWrite(w, 200, `{"access_token":"tok","token_type":"Bearer"}`)
	})}
	go func() { _ = tokens.Serve(ln) }()
	t.Cleanup(func() { _ = tokens.Close() })
	o = ocOpts(newFakeUp(t, false, ocStatus(401, "text/plain", "")))
	o.Prefix, o.Credentials = "d_", ocClientCredentials(t, tokenURL)
	set.add(o)
	g := set.start(t, nil)

	t.Run("token endpoint refusing", func(t *testing.T) {
		ts.refuse.Store(true)
		ocToolError(t, g.call(t), "The gateway could not get credentials for upstream fake: client credentials: token endpoint: HTTP 400: invalid_client.")
		if n := refusing.calls.Load(); n != 1 {
			t.Errorf("%d requests reached the upstream, want 1", n)
		}
		g.expectHop(t, 0, 1, "upstream_credentials")
		// Neutral for the breaker. The next call is answered the same
		// failure at once, without a token request: the failed request
		// put the token endpoint in backoff (issue 38).
		if calls, failures := upstream.BreakerCounts(g.ups[0]); calls != 0 || failures != 0 {
			t.Errorf("the breaker counted %d calls, %d failures; want none", calls, failures)
		}
		ts.refuse.Store(false)
		asked := ts.asked.Load()
		ocToolError(t, g.call(t), "The gateway could not get credentials for upstream fake: client credentials: token endpoint: HTTP 400: invalid_client.")
		if n := ts.asked.Load(); n != asked {
			t.Errorf("%d token requests within the backoff", n-asked)
		}
	})
	t.Run("token endpoint down", func(t *testing.T) {
		_ = tokens.Close() // and its listener: the port is closed
		res := g.callTool(t, "d_t").ExpectResult(t, "1")
		text, isErr := mcptest.ToolText(t, res)
		if !isErr || text != "The gateway could not get credentials for upstream fake: its token endpoint is unreachable." {
			t.Errorf("answer %q", text)
		}
		g.expectHop(t, 1, 1, "upstream_credentials")
	})
}

// Callers told apart by address: the gateway believes a loopback proxy's
// X-Forwarded-For (docs/design.md §10b).
var ocBehindProxy = &wymcp.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// callAs calls the tool with arguments args as the caller at address who.
func (g *ocGateway) callAs(t testing.TB, tool, args, who string) mcptest.Reply {
	t.Helper()
	return g.Send(t, mcptest.ToolCall(tool, args).With("X-Forwarded-For", who))
}

// textAs is the text of the tool's answer to a call without arguments by
// the caller at address who (behind ocBehindProxy); a tool error fails the
// test.
func textAs(t testing.TB, ep *mcptest.Endpoint, who, tool string) string {
	t.Helper()
	text, isErr := mcptest.ToolText(t, ep.Send(t, mcptest.ToolCall(tool, `{}`).With("X-Forwarded-For", who)).ExpectResult(t, "1"))
	if isErr {
		t.Fatalf("%s %s: %s", who, tool, text)
	}
	return text
}

// ocFailOn answers 500 to a call whose arguments say "fail", and ok to
// any other: one tool failing beside a healthy one.
func ocFailOn(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	if strings.Contains(string(body), `"fail"`) {
		ocStatus(500, "text/plain", "broken")(w, r, id, body)
		return
	}
	ocOK(w, r, id, body)
}

// Row: the circuit is open: answered at once with the unavailable tool
// error, the upstream not asked. It opens only on evidence that the
// upstream as a whole is down (docs/design.md §10b); the gateway's own
// probe, not a caller's call, closes it once the upstream answers again.
func TestOutcomeBreaker(t *testing.T) {
	t.Parallel()
	const interval = 100 * time.Millisecond
	f := newFakeUp(t, false)
	var set ocSet
	o := ocOpts(f)
	o.BreakerMinCalls, o.BreakerProbeInterval = 6, interval
	set.add(o)
	off := newFakeUp(t, false)
	o = ocOpts(off)
	o.Prefix, o.BreakerMinCalls = "off_", -1
	set.add(o)
	g := set.start(t, ocBehindProxy)

	// One caller's failures, however many and however spread, do not
	// open it: the upstream may be failing only what that caller asks.
	f.down.Store(true)
	for range 12 {
		ocToolError(t, g.callAs(t, "g_t", `{}`, "198.51.100.1"), "Upstream fake answered HTTP 502.")
		time.Sleep(interval)
	}
	// A second caller failing too is the evidence: the upstream is down.
	ocToolError(t, g.callAs(t, "g_t", `{}`, "198.51.100.2"), "Upstream fake answered HTTP 502.")
	before := f.calls.Load()
	ocUnavailable(t, g.callAs(t, "g_t", `{}`, "198.51.100.3"), 0, interval)
	if f.calls.Load() != before {
		t.Fatal("the open circuit let a call reach the upstream")
	}
	g.expectHop(t, 0, 14, "upstream_unavailable")

	// The gateway probes while the upstream is down, and the first
	// answer closes the circuit: callers' calls go through again.
	for f.probes.Load() < 2 {
		time.Sleep(interval / 4)
	}
	ocUnavailable(t, g.callAs(t, "g_t", `{}`, "198.51.100.3"), 0, interval)
	f.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep := g.callAs(t, "g_t", `{}`, "198.51.100.3")
		if text, isErr := mcptest.ToolText(t, rep.ExpectResult(t, "1")); !isErr && text == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the circuit did not close after the upstream answered its probe")
		}
		time.Sleep(interval / 4)
	}

	t.Run("off", func(t *testing.T) {
		off.down.Store(true)
		for i := range 10 {
			ocToolError(t, g.callAs(t, "off_t", `{}`, fmt.Sprintf("198.51.100.%d", i)), "Upstream fake answered HTTP 502.")
		}
		off.down.Store(false)
		ocExpectText(t, g.callTool(t, "off_t"), "ok", false)
		if n := off.calls.Load(); n != 11 {
			t.Errorf("%d calls, want 11", n)
		}
	})
}

// A caller looping on a tool that fails does not deny another caller's
// calls to the upstream's healthy tools (docs/design.md §10b).
func TestOutcomeBreakerOneCallerLooping(t *testing.T) {
	t.Parallel()
	f := newFakeUp(t, false)
	f.def = ocFailOn
	o := ocOpts(f)
	o.BreakerMinCalls, o.BreakerProbeInterval = 4, 50*time.Millisecond
	g := newOCGateway(t, ocBehindProxy, o)
	stop := make(chan struct{})
	looped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				looped <- n
				return
			default:
			}
			g.callAs(t, "g_t", `{"fail":true}`, "203.0.113.66")
			n++
		}
	}()
	for range 30 {
		ocExpectText(t, g.callAs(t, "g_t", `{}`, "198.51.100.7"), "ok", false)
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	if n := <-looped; n < 10 {
		t.Errorf("the looping caller made only %d calls", n)
	}
}

// One caller holding every call it can with hung calls leaves the others
// their share of the upstream's slots (docs/design.md §10b): its calls
// past its fair share are refused at once, and another caller's go
// through.
func TestOutcomeFairShare(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 16), make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	f := newFakeUp(t, false)
	f.def = ocBlock(entered, release, nil)
	t.Cleanup(releaseOnce)
	o := ocOpts(f)
	o.MaxInFlight = 8
	g := newOCGateway(t, ocBehindProxy, o)

	held := make(chan mcptest.Reply, 8)
	for range 6 {
		go func() { held <- g.callAs(t, "g_t", `{}`, "203.0.113.66") }()
	}
	for range 6 {
		<-entered
	}
	// Two slots are free, the reserve: the flooding caller holds six,
	// past its fair share of them.
	ocToolError(t, g.callAs(t, "g_t", `{}`, "203.0.113.66"), "Upstream fake is busy, and 6 of its calls in progress are this caller's, more than its fair share; retry later.")
	g.expectHop(t, 0, 1, "upstream_fair_share")
	// Another caller finds room.
	go func() { held <- g.callAs(t, "g_t", `{}`, "198.51.100.7") }()
	<-entered
	if n := f.calls.Load(); n != 7 {
		t.Errorf("the upstream got %d calls, want 7", n)
	}
	releaseOnce()
	for range 7 {
		ocExpectText(t, <-held, "ok", false)
	}
}

// Row: MaxInFlight calls are in progress: at once, the busy tool error;
// and a slow upstream holds only its own calls.
func TestOutcomeBusy(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 4), make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	slow := newFakeUp(t, false, ocBlock(entered, release, nil), ocBlock(entered, release, nil))
	t.Cleanup(releaseOnce)
	fast := newFakeUp(t, false)
	so := ocOpts(slow)
	so.MaxInFlight = 2
	fo := ocOpts(fast)
	fo.Name, fo.Prefix = "other", "h_"
	g := newOCGateway(t, ocBehindProxy, so, fo)

	// Two callers, one call each: neither holds past its fair share.
	held := make(chan mcptest.Reply, 2)
	for i := range 2 {
		go func() { held <- g.callAs(t, "g_t", `{}`, fmt.Sprintf("198.51.100.%d", i)) }()
	}
	<-entered
	<-entered
	start := time.Now()
	ocToolError(t, g.callAs(t, "g_t", `{}`, "198.51.100.9"), "Upstream fake has 2 calls in progress, its limit; retry later.")
	g.expectHop(t, 0, 1, "upstream_busy") // the held calls' hops are open
	if n := slow.calls.Load(); n != 2 {
		t.Errorf("the busy upstream got %d calls, want 2", n)
	}
	// The other upstream's calls do not wait for the slow one's.
	for range 3 {
		ocExpectText(t, g.callTool(t, "h_t"), "ok", false)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v while the slow upstream held its calls", d)
	}
	releaseOnce()
	for range 2 {
		ocExpectText(t, <-held, "ok", false)
	}
	// The slots are free again.
	ocExpectText(t, g.call(t), "ok", false)
}

// Row: Upstream.Close was called: "is closed".
func TestOutcomeClosed(t *testing.T) {
	t.Parallel()
	f := newFakeUp(t, false)
	g := newOCGateway(t, nil, ocOpts(f))
	if err := g.ups[0].Close(); err != nil {
		t.Fatal(err)
	}
	ocToolError(t, g.call(t), "Upstream fake is closed.")
	g.expectHop(t, 0, 1, "upstream_closed")
	if n := f.calls.Load(); n != 0 {
		t.Errorf("the closed upstream got %d calls", n)
	}
	if err := g.ups[0].Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Row -32021, to a 2025-era client: that revision has no -32021, so the
// refusal is the tool error it is there, with the upstream's message.
func TestOutcomeMissingCapabilityLegacyClient(t *testing.T) {
	t.Parallel()
	var set ocSet
	o := ocOpts(newFakeUp(t, false, ocRPCError(400, `{"code":-32021,"message":"This tool needs elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}`)))
	o.Prefix = ""
	set.add(o)
	g := set.start(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}})
	status, body := g.Post(t, context.Background(), mcptest.RPC{
		Body:    `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"u0_t","arguments":{}}}`,
		Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"},
	})
	want := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"This tool needs elicitation"}],"isError":true}}`
	if status != 200 || body != want {
		t.Errorf("%d\n got %s\nwant %s", status, body, want)
	}
}
