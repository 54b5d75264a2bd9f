package wymcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// allVersions serves both eras (docs/design.md §1a).
var allVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// legacyPost posts body as a 2025-era client does: no `_meta` envelope, the
// revision in MCP-Protocol-Version ("" sends none, as an initialize does).
// It returns the status, the headers and the body.
func legacyPost(t *testing.T, e *mcptest.Endpoint, version, body string) (int, http.Header, string) {
	t.Helper()
	return legacyRequest(t, e, version, body, nil)
}

// legacyRequest is legacyPost with extra headers.
func legacyRequest(t *testing.T, e *mcptest.Endpoint, version, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	resp := legacySend(t, e, version, body, hdr)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// legacySend sends the request of legacyRequest and returns the response
// unread, for a test that follows its stream.
func legacySend(t *testing.T, e *mcptest.Endpoint, version, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// legacyStream sends a 2025-era request and follows its SSE answer: next
// returns each event's data as it comes.
func legacyStream(t *testing.T, e *mcptest.Endpoint, version, body string) (next func() string) {
	t.Helper()
	resp := legacySend(t, e, version, body, nil)
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	events := sseEvents(resp.Body)
	return func() string {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(30 * time.Second):
			t.Fatal("no event in 30 s")
			return ""
		}
	}
}

// exchange is one request of a 2025-era client and its exact answer.
type exchange struct {
	name, version, body string
	status              int
	want                string
}

// expectExchanges sends each exchange and compares the answer byte for
// byte.
func expectExchanges(t *testing.T, e *mcptest.Endpoint, xs []exchange) {
	t.Helper()
	for _, x := range xs {
		if status, _, body := legacyPost(t, e, x.version, x.body); status != x.status || body != x.want {
			t.Errorf("%s: %d %s\nwant %d %s", x.name, status, body, x.status, x.want)
		}
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`

func initialize(version string) string {
	return strings.Replace(initializeBody, "%q", mcptest.Quote(version), 1)
}

// TestLegacyOff: by default a 2025 client is answered, not served, and a
// posted response is refused, as before the 2025 era could be served.
func TestLegacyOff(t *testing.T) {
	t.Parallel()
	_, e := newTestServer(t, nil, nil)
	status, _, body := legacyPost(t, e, "", initialize("2025-11-25"))
	if want := `{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`; status != 400 || body != want {
		t.Errorf("initialize: %d %s\nwant 400 %s", status, body, want)
	}
	status, _, body = legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":"x","result":{}}`)
	if status != 400 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("posted response: %d %s", status, body)
	}
	status, _, body = legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}`; status != 400 || body != want {
		t.Errorf("ping: %d %s\nwant 400 %s", status, body, want)
	}
}

// TestVersionsOption: the revisions served are checked when the server is
// built.
func TestVersionsOption(t *testing.T) {
	t.Parallel()
	info := protocol.Implementation{Name: "s", Version: "1"}
	for _, bad := range [][]string{{"2025-11-25"}, {"2026-07-28", "2025-03-26"}, {"2026-07-28", "2025-06-18", "2025-06-18"}} {
		if _, err := wymcp.New(info, &wymcp.Options{Versions: bad}); err == nil || !strings.Contains(err.Error(), "Options.Versions") {
			t.Errorf("Versions %q: err %v", bad, err)
		}
	}
}

// TestLegacyLifecycle: initialize negotiates as the 2025 revisions say, no
// session id is issued, and ping, tools/list and tools/call answer in the
// era's shapes; the 2026-07-28 answers name every revision served.
func TestLegacyLifecycle(t *testing.T) {
	t.Parallel()
	_, e := newTestServer(t, &wymcp.Options{Versions: allVersions, Instructions: "Be kind."}, nil)

	for _, tc := range []struct{ requested, got string }{
		{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2024-11-05", "2025-11-25"}, {"2026-07-28", "2025-11-25"},
	} {
		status, hdr, body := legacyPost(t, e, "", initialize(tc.requested))
		want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + tc.got + `","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"wymcp-test","version":"0.0.1"},"instructions":"Be kind."}}`
		if status != 200 || body != want {
			t.Errorf("initialize %s: %d %s\nwant 200 %s", tc.requested, status, body, want)
		}
		if hdr.Get("Mcp-Session-Id") != "" {
			t.Errorf("initialize %s: a session id was issued", tc.requested)
		}
	}
	status, _, body := legacyPost(t, e, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if status != 200 || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "clientInfo") {
		t.Errorf("initialize without clientInfo: %d %s", status, body)
	}
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != 202 || body != "" {
		t.Errorf("notifications/initialized: %d %q", status, body)
	}
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		if status, _, body := legacyPost(t, e, v, `{"jsonrpc":"2.0","id":7,"method":"ping"}`); status != 200 || body != `{"jsonrpc":"2.0","id":7,"result":{}}` {
			t.Errorf("ping %s: %d %s", v, status, body)
		}
		status, _, body := legacyPost(t, e, v, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		if want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`; status != 200 || body != want {
			t.Errorf("tools/call %s: %d %s\nwant %s", v, status, body, want)
		}
		status, _, body = legacyPost(t, e, v, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		if status != 200 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo",`) || strings.Contains(body, "ttlMs") || strings.Contains(body, "resultType") || strings.Contains(body, "cacheScope") {
			t.Errorf("tools/list %s: %d %s", v, status, body)
		}
		// Methods outside the era's table: -32601, with HTTP 200.
		for _, m := range []string{"server/discover", "resources/list"} {
			status, _, body = legacyPost(t, e, v, `{"jsonrpc":"2.0","id":4,"method":"`+m+`"}`)
			if want := `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}`; status != 200 || body != want {
				t.Errorf("%s %s: %d %s\nwant 200 %s", m, v, status, body, want)
			}
		}
	}
	// Results of the era: no resultType, no server _meta; errors as results.
	expectExchanges(t, e, []exchange{
		{"typed tools/call", "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			200, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}}`},
		{"panicking tool", "2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"panic"}}`,
			200, `{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"Tool execution failed: internal error"}],"isError":true}}`},
		{"fault past the tool", "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bad_result"}}`,
			200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`},
		{"deadline", "2025-11-25", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"short_deadline"}}`,
			200, `{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"Tool short_deadline timed out after 50ms"}],"isError":true}}`},
		{"unknown tool", "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope"}}`,
			200, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
		{"params not an object", "2025-11-25", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[]}`,
			200, `{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"Invalid params: params must be an object"}}`},
		// No header and no _meta: the 2025 transport's 2025-03-26, not served.
		{"no MCP-Protocol-Version", "", `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`,
			400, `{"jsonrpc":"2.0","id":12,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":""}}}`},
		// A revision not served, in the header: 400 and -32022 naming them all.
		{"2025-03-26", "2025-03-26", `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`,
			400, `{"jsonrpc":"2.0","id":10,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"2025-03-26"}}}`},
	})
	// The 2026-07-28 path: server/discover lists every revision served.
	rep := e.Send(t, mcptest.Call("server/discover", ""))
	res := rep.ExpectResult(t, "1")
	if got, _ := json.Marshal(res["supportedVersions"]); string(got) != `["2026-07-28","2025-11-25","2025-06-18"]` {
		t.Errorf("supportedVersions = %s", got)
	}
}

// TestLegacyShapes: each 2025 revision sees the tool definitions it knows.
func TestLegacyShapes(t *testing.T) {
	t.Parallel()
	icon := tools.Must(tools.NewRaw("iconic", "Has an icon and an array output schema.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) { return protocol.TextResult("x"), nil },
		tools.WithIcons(protocol.Icon{Src: "https://example.com/i.png"}),
		tools.WithOutputSchema([]byte(`{"type":"array"}`))))
	info := protocol.Implementation{Name: "s", Version: "1", Description: "d", WebsiteURL: "https://example.com"}
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions}, icon)
	if err != nil {
		t.Fatal(err)
	}
	e := mcptest.Serve(t, srv, info)
	_, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"iconic","description":"Has an icon and an array output schema.","inputSchema":{"type":"object"},"icons":[{"src":"https://example.com/i.png"}]}]}}`; body != want {
		t.Errorf("2025-11-25 tools/list:\n got %s\nwant %s", body, want)
	}
	_, _, body = legacyPost(t, e, "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"iconic","description":"Has an icon and an array output schema.","inputSchema":{"type":"object"}}]}}`; body != want {
		t.Errorf("2025-06-18 tools/list:\n got %s\nwant %s", body, want)
	}
	_, _, body = legacyPost(t, e, "", initialize("2025-06-18"))
	if want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"s","version":"1"}}}`; body != want {
		t.Errorf("2025-06-18 initialize:\n got %s\nwant %s", body, want)
	}
	_, _, body = legacyPost(t, e, "", initialize("2025-11-25"))
	if want := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"s","version":"1","description":"d","websiteUrl":"https://example.com"}}}`; body != want {
		t.Errorf("2025-11-25 initialize:\n got %s\nwant %s", body, want)
	}
}

// sseEvents reads an SSE answer's data lines as they come, onto a channel.
func sseEvents(body io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- data
			}
		}
	}()
	return ch
}

// TestLegacyProgressAndAsk: a 2025-era call streams its progress, and a
// tool that asks for input sends the era's request to the client on the
// call's stream; the client's answer, POSTed back, reaches the tool, which
// runs again with it.
func TestLegacyProgressAndAsk(t *testing.T) {
	t.Parallel()
	form := protocol.ElicitRequest{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	runs := 0
	greet := tools.Must(tools.NewRaw("greet", "Asks a name.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			runs++
			tools.ReportProgress(ctx, float64(runs), nil, "asking")
			var answer protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("name", form, &answer)); err != nil {
				return nil, err
			}
			var who struct {
				Name string `json:"name"`
			}
			if err := answer.DecodeContent(&who); err != nil {
				return nil, err
			}
			return protocol.TextResult("Hello, " + who.Name), nil
		}))
	info := protocol.Implementation{Name: "s", Version: "1"}
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions}, greet)
	if err != nil {
		t.Fatal(err)
	}
	e := mcptest.Serve(t, srv, info)

	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","_meta":{"progressToken":"p"}}}`)
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"message":"asking"}}`; got != want {
		t.Errorf("progress 1:\n got %s\nwant %s", got, want)
	}
	var ask struct {
		ID     string          `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	raw := next()
	if err := json.Unmarshal([]byte(raw), &ask); err != nil || ask.Method != "elicitation/create" || !strings.HasPrefix(ask.ID, "wymcp-") {
		t.Fatalf("server-to-client request: %s (%v)", raw, err)
	}
	if want := `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`; string(ask.Params) != want {
		t.Errorf("params %s, want %s", ask.Params, want)
	}
	// An answer to a request nobody awaits is refused; the right one is taken.
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":"wymcp-0-nope","result":{"action":"cancel"}}`); status != 400 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: no request of this server awaits`) {
		t.Errorf("stray answer: %d %s", status, body)
	}
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"accept","content":{"name":"Ada"}}}`); status != 202 || body != "" {
		t.Errorf("answer: %d %q", status, body)
	}
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"message":"asking"}}`; got != want {
		t.Errorf("progress 2:\n got %s\nwant %s", got, want)
	}
	if got, want := next(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello, Ada"}]}}`; got != want {
		t.Errorf("result:\n got %s\nwant %s", got, want)
	}
	// A request that does not accept a stream cannot be asked anything.
	status, _, body := legacyRequest(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet"}}`, map[string]string{"Accept": "application/json"})
	if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"The tool needed input from the client, and the client cannot be asked for input: its request does not accept a text/event-stream answer."}],"isError":true}}`; status != 200 || body != want {
		t.Errorf("JSON-only request: %d %s\nwant %s", status, body, want)
	}
	// A client that answers with an error ends the call with a tool error.
	next = legacyStream(t, e, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet"}}`)
	if err := json.Unmarshal([]byte(next()), &ask); err != nil {
		t.Fatal(err)
	}
	// 2025-06-18 knows form mode only, and has no mode member.
	if want := `{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`; string(ask.Params) != want {
		t.Errorf("2025-06-18 params %s, want %s", ask.Params, want)
	}
	legacyPost(t, e, "2025-06-18", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`)
	if got, want := next(), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"The tool needed input from the client, and the client did not answer elicitation/create: the client answered with an error (-32601 Method not found)."}],"isError":true}}`; got != want {
		t.Errorf("error answer:\n got %s\nwant %s", got, want)
	}
}

// TestLegacyAuth: a 2025-era request is authenticated as a 2026-07-28 one
// is: the same statuses, challenges and bodies; scopes decide what it may
// call and see; the span says the era.
func TestLegacyAuth(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := newAuthServer(t, &wymcp.Options{
		Versions:       allVersions,
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		Auth: &wymcp.AuthOptions{
			Authenticator:    wymcp.AuthenticatorFunc(fakeAuthenticator),
			ResourceMetadata: testMetadata,
			RequiredScopes:   []string{"mcp"},
		},
	}, authTools()...)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_only","arguments":{}}}`
	for _, token := range []string{"", "outsider", "reader", "garbage"} {
		hdr := map[string]string{}
		modern := mcptest.ToolCall("admin_only", `{}`)
		if token != "" {
			hdr["Authorization"] = "Bearer " + token
			modern = bearer(modern, token)
		}
		status, h, body := legacyRequest(t, e, "2025-11-25", call, hdr)
		rep := e.Send(t, modern)
		if status != rep.Status || h.Get("WWW-Authenticate") != rep.Header.Get("WWW-Authenticate") || body != string(rep.Raw) {
			t.Errorf("token %q: 2025 era %d %q %s\n2026-07-28 %d %q %s", token, status, h.Get("WWW-Authenticate"), body,
				rep.Status, rep.Header.Get("WWW-Authenticate"), rep.Raw)
		}
	}
	status, _, body := legacyRequest(t, e, "2025-06-18", call, map[string]string{"Authorization": "Bearer admin"})
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"subject\":\"root\",\"scopes\":[\"files:read\",\"admin\",\"mcp\"]}"}],"structuredContent":{"subject":"root","scopes":["files:read","admin","mcp"]}}}`; status != 200 || body != want {
		t.Errorf("admin: %d %s\nwant %s", status, body, want)
	}
	if v, _ := spanAttr(rec, "mcp.protocol.version"); v != "2025-06-18" {
		t.Errorf("mcp.protocol.version = %q, want 2025-06-18", v)
	}
	// A caller without the admin scope does not see admin_only.
	_, _, body = legacyRequest(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Authorization": "Bearer reader"})
	if strings.Contains(body, `"admin_only"`) || !strings.Contains(body, `"whoami_raw"`) || strings.Contains(body, "cacheScope") {
		t.Errorf("reader's tools/list: %s", body)
	}
	// The answer to a server-to-client request is authenticated too.
	status, _, _ = legacyRequest(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":"x","result":{}}`, nil)
	if status != 401 {
		t.Errorf("unauthenticated answer: %d, want 401", status)
	}
}

// TestLegacyCutShort: a 2025-era call still running when Shutdown's time
// is up is answered in its era's shape.
func TestLegacyCutShort(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 1)}
	srv, e := newTestServer(t, &wymcp.Options{Versions: allVersions}, probe)
	done := make(chan string, 1)
	go func() {
		_, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000}}}`)
		done <- body
	}()
	<-probe.started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_ = srv.Shutdown(ctx)
	select {
	case body := <-done:
		if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"The call was cut short: the server is shutting down"}],"isError":true}}`; body != want {
			t.Errorf("cut short: %s\nwant %s", body, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}

// TestLegacyRootsAndDeadline: roots/list goes to a 2025-era client as
// elicitation does; a client that never answers holds the call only until
// the tool's deadline, which answers it as any deadline does.
func TestLegacyRootsAndDeadline(t *testing.T) {
	t.Parallel()
	// A server whose roots tool has deadline: 30 s for the answered call
	// (the test's exchanges fall within it on a loaded machine too), 300 ms
	// for the unanswered one.
	serve := func(deadline time.Duration) *mcptest.Endpoint {
		roots := tools.Must(tools.NewRaw("roots", "Lists the client's roots.", []byte(`{"type":"object"}`),
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var res protocol.ListRootsResult
				if err := tools.Ask(ctx, tools.ListRoots("roots", &res)); err != nil {
					return nil, err
				}
				return protocol.TextResult(res.Roots[0].URI), nil
			}, tools.WithDeadline(deadline)))
		info := protocol.Implementation{Name: "s", Version: "1"}
		srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions}, roots)
		if err != nil {
			t.Fatal(err)
		}
		return mcptest.Serve(t, srv, info)
	}
	e := serve(30 * time.Second)
	var ask struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	}
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
	if err := json.Unmarshal([]byte(next()), &ask); err != nil || ask.Method != "roots/list" {
		t.Fatalf("request %+v %v", ask, err)
	}
	legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"roots":[{"uri":"file:///work"}]}}`)
	if got, want := next(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"file:///work"}]}}`; got != want {
		t.Errorf("roots:\n got %s\nwant %s", got, want)
	}
	// Unanswered: the deadline answers.
	e = serve(300 * time.Millisecond)
	next = legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
	if err := json.Unmarshal([]byte(next()), &ask); err != nil || ask.Method != "roots/list" {
		t.Fatalf("request %+v %v", ask, err)
	}
	if got, want := next(), `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool roots timed out after 300ms"}],"isError":true}}`; got != want {
		t.Errorf("deadline:\n got %s\nwant %s", got, want)
	}
}

// TestLegacyAnswerToAnotherReplica: the answer to a request a replica sent
// its client, when it reaches another replica, is refused there, and the
// call that asked ends at its deadline: never a hang, never a crossed
// answer (docs/design.md §1a).
func TestLegacyAnswerToAnotherReplica(t *testing.T) {
	t.Parallel()
	asks := tools.Must(tools.NewRaw("asks", "Asks a name.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var res protocol.ElicitResult
			form := protocol.ElicitRequest{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)}
			if err := tools.Ask(ctx, tools.Elicit("name", form, &res)); err != nil {
				return nil, err
			}
			return protocol.TextResult(res.Action), nil
		}, tools.WithDeadline(300*time.Millisecond)))
	info := protocol.Implementation{Name: "s", Version: "1"}
	replica := func() *mcptest.Endpoint {
		srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions}, asks)
		if err != nil {
			t.Fatal(err)
		}
		return mcptest.Serve(t, srv, info)
	}
	a, b := replica(), replica()
	next := legacyStream(t, a, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
	var ask struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(next()), &ask); err != nil {
		t.Fatal(err)
	}
	status, _, body := legacyPost(t, b, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"accept","content":{}}}`)
	if status != 400 || !strings.Contains(body, `"id":null`) || !strings.Contains(body, "sent by another replica") {
		t.Errorf("answer at the other replica: %d %s", status, body)
	}
	if got, want := next(), `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool asks timed out after 300ms"}],"isError":true}}`; got != want {
		t.Errorf("the call that asked:\n got %s\nwant %s", got, want)
	}
}

// TestLegacyAnswersCharged: the answers a 2025-era call holds across its
// rounds are charged to the body budget until the call ends (docs/design.md
// §1a, §3 stage 1): past the budget an answer is refused with 503, and once
// the calls holding it end, it is given back.
func TestLegacyAnswersCharged(t *testing.T) {
	t.Parallel()
	const maxBody = 1 << 20 // a budget of 64 MiB, the floor
	form := protocol.ElicitRequest{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)}
	twice := tools.Must(tools.NewRaw("twice", "Asks twice.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var a, b protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("a", form, &a)); err != nil {
				return nil, err
			}
			if err := tools.Ask(ctx, tools.Elicit("b", form, &b)); err != nil {
				return nil, err
			}
			return protocol.TextResult("ok"), nil
			// The calls must outlive the loop that fills the budget, however
			// long a loaded machine takes over it: a deadline that passed
			// would release the answers held before the budget is full.
		}, tools.WithDeadline(10*time.Minute)))
	info := protocol.Implementation{Name: "s", Version: "1"}
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions, MaxBodyBytes: maxBody, MaxInFlight: 1000}, twice)
	if err != nil {
		t.Fatal(err)
	}
	e := mcptest.Serve(t, srv, info)
	big := strings.Repeat("x", maxBody-512)
	var ask struct {
		ID string `json:"id"`
	}
	answer := func(next func() string) (int, http.Header, string) {
		if err := json.Unmarshal([]byte(next()), &ask); err != nil {
			t.Fatal(err)
		}
		return legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"accept","content":{"name":"`+big+`"}}}`)
	}
	var holding []func() string
	refused := false
	for range 80 {
		next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice"}}`)
		status, hdr, body := answer(next)
		if status == 202 {
			holding = append(holding, next)
			continue
		}
		if status != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(body, `"code":-32603`) {
			t.Fatalf("answer past the budget: %d %v %s", status, hdr, body)
		}
		refused = true
		break
	}
	if !refused || len(holding) < 50 {
		t.Fatalf("%d answers held, refused %v: want the 64 MiB budget to refuse one past about 60", len(holding), refused)
	}
	// The calls holding answers end (their second answer is small); then the
	// budget has room again.
	for _, next := range holding {
		if err := json.Unmarshal([]byte(next()), &ask); err != nil {
			t.Fatal(err)
		}
		legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"cancel"}}`)
		if got := next(); !strings.Contains(got, `"text":"ok"`) {
			t.Fatalf("call end: %s", got)
		}
	}
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice"}}`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, _, body := answer(next)
		if status == 202 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the budget was not given back: %d %s", status, body)
		}
		time.Sleep(50 * time.Millisecond)
		next = legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice"}}`)
	}
}
