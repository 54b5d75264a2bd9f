package wymcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// askingTool asks the user's name once and answers the action taken.
func askingTool(deadline time.Duration) *tools.Tool {
	form := protocol.ElicitRequest{Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	return tools.Must(tools.NewRaw("asks", "Asks a name.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var res protocol.ElicitResult
			if err := tools.Ask(ctx, tools.Elicit("name", form, &res)); err != nil {
				return nil, err
			}
			return protocol.TextResult(res.Action), nil
		}, tools.WithDeadline(deadline)))
}

// askingServer serves askingTool in both eras, with opts (nil: none). A
// deadline is the time the test has to answer the tool's question: 30 s
// leaves a loaded machine room (a call still waiting at the test's end
// is cancelled as its stream is closed).
func askingServer(t *testing.T, deadline time.Duration, opts *wymcp.Options) (*wymcp.Server, *mcptest.Endpoint) {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	opts.Versions = allVersions
	info := protocol.Implementation{Name: "s", Version: "1"}
	srv, err := wymcp.New(info, opts, askingTool(deadline))
	if err != nil {
		t.Fatal(err)
	}
	return srv, mcptest.Serve(t, srv, info)
}

// serverRequest is a request the server sent its client on a call's
// stream.
type serverRequest struct {
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// requestOf reads an event of a call's stream as the server's request.
func requestOf(t *testing.T, event string) serverRequest {
	t.Helper()
	var r serverRequest
	if err := json.Unmarshal([]byte(event), &r); err != nil || r.Method == "" {
		t.Fatalf("not a request of the server's: %s (%v)", event, err)
	}
	return r
}

// TestLegacyCrossCallerAnswer: with auth, another caller
// cannot answer a call's request, nor consume it; the caller itself can.
func TestLegacyCrossCallerAnswer(t *testing.T) {
	t.Parallel()
	e := newAuthServer(t, &wymcp.Options{Versions: allVersions}, askingTool(30*time.Second))
	resp := legacySend(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`, map[string]string{"Authorization": "Bearer admin"})
	defer resp.Body.Close()
	events := sseEvents(resp.Body)
	var ask struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(<-events), &ask); err != nil {
		t.Fatal(err)
	}
	answer := `{"jsonrpc":"2.0","id":` + mcptest.Quote(ask.ID) + `,"result":{"action":"decline"}}`
	if status, _, body := legacyRequest(t, e, "2025-11-25", answer, map[string]string{"Authorization": "Bearer reader"}); status != 400 {
		t.Errorf("another caller's answer: %d %s", status, body)
	}
	if status, _, body := legacyRequest(t, e, "2025-11-25", answer, map[string]string{"Authorization": "Bearer admin"}); status != 202 {
		t.Errorf("the caller's answer: %d %s", status, body)
	}
	if got := <-events; got != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"decline"}]}}` {
		t.Errorf("result %s", got)
	}
}

// TestLegacyAnswerRejectionIDs: every refusal of a posted answer, the
// auth stage's too, has id null: its id is the server's own request's, not
// a request of the client's.
func TestLegacyAnswerRejectionIDs(t *testing.T) {
	t.Parallel()
	e := newAuthServer(t, &wymcp.Options{Versions: allVersions})
	status, _, body := legacyRequest(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":"wymcp-1-abc","result":{}}`, nil)
	t.Logf("unauthenticated answer: %d %s", status, body)
	if status != 401 || !strings.Contains(body, `"id":null`) {
		t.Errorf("the 401 to a posted answer echoes the server's own request id: %s (the unawaited refusal says id null)", body)
	}
}

// TestLegacyBadAnswerWording: a 2025-era client whose answer to the
// server's elicitation/create is malformed gets an isError result naming
// the method, as one that answers with a JSON-RPC error does: not a -32602
// about params.inputResponses, a 2026-07-28 member its revision lacks.
func TestLegacyBadAnswerWording(t *testing.T) {
	t.Parallel()
	_, e := askingServer(t, 30*time.Second, nil)
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
	ask := requestOf(t, next())
	if status, _, _ := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"maybe"}}`); status != 202 {
		t.Fatalf("answer %d", status)
	}
	got := next()
	t.Logf("answer to the tools/call: %s", got)
	if strings.Contains(got, "inputResponses") || strings.Contains(got, `"code":-32602`) {
		t.Errorf("a malformed client answer is reported to the 2025 client as its tools/call's invalid params, naming inputResponses: %s", got)
	}
}

// TestLegacyOddInputs logs what odd 2025-era inputs get, and
// checks each is a specified answer (never a 5xx, never an empty body for
// a request).
func TestLegacyOddInputs(t *testing.T) {
	t.Parallel()
	_, e := newTestServer(t, &wymcp.Options{Versions: allVersions}, nil)
	for _, c := range []struct{ version, body string }{
		{"", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":null}`},
		{"", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`},
		{"", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}}}`},
		{"", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[]}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":5}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":{}}}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"1999-01-01", `{"jsonrpc":"2.0","id":"wymcp-1-x","result":{}}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":"wymcp-1-x","result":{},"method":"ping"}`},
		{"2025-11-25", `{"jsonrpc":"2.0","id":"wymcp-1-x","error":{}}`},
	} {
		status, _, body := legacyPost(t, e, c.version, c.body)
		t.Logf("[%s] %s\n  -> %d %s", c.version, c.body, status, body)
		if status >= 500 || body == "" {
			t.Errorf("unspecified answer")
		}
	}
}

// TestLegacyAnswerIDByValue: JSON-RPC matches ids by value: the same
// string id written with an escape answers the request.
func TestLegacyAnswerIDByValue(t *testing.T) {
	t.Parallel()
	_, e := askingServer(t, 30*time.Second, nil)
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
	ask := requestOf(t, next())
	escaped := `"\u0077` + ask.ID[1:] + `"` // "w" as \u0077: the same JSON string
	status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+escaped+`,"result":{"action":"decline"}}`)
	if status != 202 {
		t.Errorf("answer with the id %s (= %q): %d %s", escaped, ask.ID, status, body)
	}
}

// TestLegacyAnswerVersionHeader: a posted answer whose
// MCP-Protocol-Version names a revision not served is refused with 400
// (the 2025 transport: a server MUST answer 400 to an unsupported one).
func TestLegacyAnswerVersionHeader(t *testing.T) {
	t.Parallel()
	_, e := askingServer(t, 30*time.Second, nil)
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
	ask := requestOf(t, next())
	status, _, body := legacyPost(t, e, "1999-01-01", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"decline"}}`)
	if status != 400 {
		t.Errorf("answer under MCP-Protocol-Version 1999-01-01: %d %q (want 400)", status, body)
	}
}

// TestLegacyAnswerWithInFlightFull: an answer takes no
// in-flight place, so calls that ask cannot lock out their own answers.
func TestLegacyAnswerWithInFlightFull(t *testing.T) {
	t.Parallel()
	_, e := askingServer(t, 30*time.Second, &wymcp.Options{MaxInFlight: 1})
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
	ask := requestOf(t, next())
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"ping"}`); status != 503 {
		t.Errorf("ping with the one place taken: %d %s", status, body)
	}
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"decline"}}`); status != 202 {
		t.Errorf("answer: %d %s", status, body)
	}
	if got := next(); !strings.Contains(got, `"decline"`) {
		t.Errorf("result %s", got)
	}
}

// TestLegacyAskingBound: in 2026-07-28 a tool that asks answers
// input_required at once and the server holds nothing while the client
// thinks; a 2025-era call waits for its client on its in-flight place. At
// most half the places may wait (docs/design.md §1a): past that a call that
// asks ends with a tool error at once, and the other half stays free for
// every other client.
func TestLegacyAskingBound(t *testing.T) {
	t.Parallel()
	const places = 4
	_, e := askingServer(t, 30*time.Second, &wymcp.Options{MaxInFlight: places})
	// 2026-07-28: the same tool holds no place.
	for range places * 2 {
		rep := e.Send(t, mcptest.ToolCall("asks", `{}`).WithCapabilities(`{"elicitation":{}}`))
		if rep.Status != 200 {
			t.Fatalf("2026-07-28 asks: %d %s", rep.Status, rep.Raw)
		}
	}
	for range places / 2 {
		next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"asks"}}`)
		next() // the elicitation/create, never answered
	}
	status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"asks"}}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"The tool needed input from the client, and the server has too many calls waiting for their clients' answers; retry later."}],"isError":true}}`; status != 200 || body != want {
		t.Errorf("an ask past the bound: %d %s\nwant %s", status, body, want)
	}
	if rep := e.Send(t, mcptest.Call("tools/list", "")); rep.Status != 200 {
		t.Errorf("a 2026-07-28 tools/list while %d 2025-era calls wait: %d %s", places/2, rep.Status, rep.Raw)
	}
}

// TestLegacyStructuredNotObject: both 2025 revisions type structuredContent
// as an object; a value of another kind is left out of a 2025 client's
// result, and its content blocks still carry it.
func TestLegacyStructuredNotObject(t *testing.T) {
	t.Parallel()
	list := tools.Must(tools.NewRaw("list", "Returns an array.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: "[1,2,3]"}}, StructuredContent: []int{1, 2, 3}}, nil
		}, tools.WithOutputSchema([]byte(`{"type":"array"}`))))
	info := protocol.Implementation{Name: "s", Version: "1"}
	srv, err := wymcp.New(info, &wymcp.Options{Versions: allVersions}, list)
	if err != nil {
		t.Fatal(err)
	}
	e := mcptest.Serve(t, srv, info)
	status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list"}}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"[1,2,3]"}]}}`; status != 200 || body != want {
		t.Errorf("2025 era: %d %s\nwant %s", status, body, want)
	}
	rep := e.Send(t, mcptest.ToolCall("list", `{}`))
	if !strings.Contains(string(rep.Raw), `"structuredContent":[1,2,3]`) {
		t.Errorf("2026-07-28 keeps it: %s", rep.Raw)
	}
}

// TestLegacyCutWhileAsking: a call waiting for its client's
// answer when Shutdown's time is up is answered as cut short, on its
// stream, in its era's shape; the late answer is then refused.
func TestLegacyCutWhileAsking(t *testing.T) {
	t.Parallel()
	srv, e := askingServer(t, 30*time.Second, nil)
	next := legacyStream(t, e, "2025-06-18", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"asks","_meta":{"progressToken":"p"}}}`)
	ask := requestOf(t, next())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = srv.Shutdown(ctx)
	if got, want := next(), `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"The call was cut short: the server is shutting down"}],"isError":true}}`; got != want {
		t.Errorf("cut: %s", got)
	}
	if status, _, _ := legacyPost(t, e, "2025-06-18", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"decline"}}`); status == 202 {
		t.Errorf("late answer accepted")
	}
}

// TestLegacyAnswerDuringShutdown: once Shutdown stops
// admitting, an answer to a call in flight is still taken, so the call
// finishes instead of waiting for the cut.
func TestLegacyAnswerDuringShutdown(t *testing.T) {
	t.Parallel()
	srv, e := askingServer(t, 30*time.Second, nil)
	next := legacyStream(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"asks"}}`)
	ask := requestOf(t, next())
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	time.Sleep(50 * time.Millisecond)
	if status, _, _ := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"ping"}`); status != 503 {
		t.Errorf("ping during shutdown: %d", status)
	}
	if status, _, body := legacyPost(t, e, "2025-11-25", `{"jsonrpc":"2.0","id":`+mcptest.Quote(ask.ID)+`,"result":{"action":"decline"}}`); status != 202 {
		t.Errorf("answer during shutdown: %d %s", status, body)
	}
	if got := next(); !strings.Contains(got, `"decline"`) {
		t.Errorf("result %s", got)
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// TestLegacyMirrorHeaders: a 2025-era request need not carry the
// 2026-07-28 mirror headers, but one it carries may not contradict the
// body (400, -32020, as on the 2026-07-28 path): a gateway in front may
// route or authorize on them.
func TestLegacyMirrorHeaders(t *testing.T) {
	t.Parallel()
	_, e := newTestServer(t, &wymcp.Options{Versions: allVersions}, nil)

	// Control: the 2026-07-28 path refuses the mismatch.
	modern := mcptest.ToolCall("add", `{"a":1,"b":2}`).With("Mcp-Name", "echo")
	if rep := e.Send(t, modern); rep.Status != 400 || !strings.Contains(string(rep.Raw), "-32020") {
		t.Fatalf("2026-07-28 control: %d %s", rep.Status, rep.Raw)
	}

	cases := []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"Mcp-Name names another tool",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
		{"Mcp-Method names another method",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			map[string]string{"Mcp-Method": "tools/list"}},
		{"Mcp-Param-Region disagrees with the argument",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"routed","arguments":{"region":"eu-west"}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "routed", "Mcp-Param-Region": "us-east"}},
	}
	for _, c := range cases {
		status, _, body := legacyRequest(t, e, "2025-11-25", c.body, c.hdr)
		if status != 400 || !strings.Contains(body, `"code":-32020`) {
			t.Errorf("%s: %d %s, want 400 -32020", c.name, status, body)
		}
	}
}
