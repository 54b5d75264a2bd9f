package upstream_test

// Red-team tests of the gateway half (package upstream). Each test names
// the finding it demonstrates; each fails on the code as reviewed.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// rtUp is a small scripted upstream whose tools/list and tools/call the
// test sets.
type rtUp struct {
	t      testing.TB
	URL    string
	legacy bool
	// list is the tools/list result object's members after resultType
	// (e.g. `"tools":[...],"ttlMs":1`).
	list string
	// listFn, when set, makes each tools/list page from its request.
	listFn func(body []byte) string
	call   func(w http.ResponseWriter, r *http.Request, id string, body []byte)

	lists atomic.Int32
	// answers receives each JSON-RPC response the gateway POSTs (its
	// answers to the upstream's requests).
	answers chan string

	mu      sync.Mutex
	headers []http.Header // each tools/call's headers
}

func newRTUp(t testing.TB, legacy bool, list string, call func(http.ResponseWriter, *http.Request, string, []byte)) *rtUp {
	t.Helper()
	u := &rtUp{t: t, legacy: legacy, list: list, call: call, answers: make(chan string, 16)}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

func (u *rtUp) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		w.WriteHeader(400)
		return
	}
	id := string(m.ID)
	switch m.Method {
	case "server/discover":
		if u.legacy {
			ocWrite(w, 404, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`)
	case "initialize":
		if !u.legacy {
			ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s1")
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"rt","version":"1"}}}`)
	case "tools/list":
		u.lists.Add(1)
		rt := `"resultType":"complete",`
		if u.legacy {
			rt = ""
		}
		list := u.list
		if u.listFn != nil {
			list = u.listFn(body)
		}
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{`+rt+list+`}}`)
	case "tools/call":
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		u.call(w, r, id, body)
	case "":
		// The gateway's answer to a request of ours.
		select {
		case u.answers <- string(body):
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

func (u *rtUp) callHeaders() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.headers...)
}

func rtConnect(t testing.TB, o upstream.Options) *upstream.Upstream {
	t.Helper()
	if o.Name == "" {
		o.Name = "fake"
	}
	if o.Prefix == "" {
		o.Prefix = "g_"
	}
	o.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up, err := upstream.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	return up
}

func rtServe(t testing.TB, wopts *wymcp.Options, ts []*tools.Tool) *mcptest.Endpoint {
	t.Helper()
	s, err := wymcp.New(gatewayInfo, wopts, ts...)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Serve(t, s, gatewayInfo)
}

// Finding 1 (medium): the gateway's answer to a 2025-era upstream's
// request during a call (ping, a relayed elicitation, a decline) is POSTed
// on a new connection while the call's own stream holds one. With
// MaxConns connections all held by such streams (MaxConns 1 here; 64 by
// default, against 256 calls in flight), the answer waits for a
// connection that only the answer itself would free: the call hangs until
// its deadline, and the upstream waits for an answer that does not come.
func TestRedteamAnswerWaitsForAConnectionItHolds(t *testing.T) {
	t.Parallel()
	var up *rtUp
	up = newRTUp(t, true, `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`,
		func(w http.ResponseWriter, r *http.Request, id string, _ []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"up-1\",\"method\":\"ping\"}\n\n")
			_ = http.NewResponseController(w).Flush()
			// A 2025 server's request waits for the client's answer.
			select {
			case <-up.answers:
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
				return
			}
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n")
		})
	// The hang ends at the upstream's 10 s wait: the call's deadline
	// leaves the answer that comes room for a loaded machine.
	u := rtConnect(t, upstream.Options{URL: up.URL, MaxConns: 1, CallTimeout: 30 * time.Second})
	g := rtServe(t, nil, u.Tools())
	start := time.Now()
	rep := g.Send(t, mcptest.ToolCall("g_t", `{}`))
	text, isErr := mcptest.ToolText(t, rep.ExpectResult(t, "1"))
	if text != "ok" || isErr {
		t.Fatalf("after %v: answer %q (isError %v), want \"ok\": the gateway's answer to the upstream's ping waited for the connection the call's stream holds",
			time.Since(start).Round(time.Millisecond), text, isErr)
	}
}

// Finding 2 (medium): a 2025-era client (served when Options.Versions
// lists a 2025 revision) sends no Mcp-Param-* headers, and its arguments
// are not checked against the upstream's schema. An argument mirrored by
// x-mcp-header that is an array or object written over two lines becomes
// a Mcp-Param-* header value holding a line feed; net/http refuses to send
// it, and the gateway answers "unreachable" and counts an upstream failure
// on its circuit breaker, as if the upstream itself had failed.
func TestRedteamClientArgumentOpensTheBreaker(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false,
		`"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]`,
		ocOK)
	u := rtConnect(t, upstream.Options{URL: up.URL})
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())

	legacy := func(args string) mcptest.RPC {
		return mcptest.RPC{
			Body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"g_t","arguments":` + args + `}}`,
			Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"},
		}
	}
	rep := g.Send(t, legacy("{\"region\":[\"a\",\n\"b\"]}"))
	text, _ := rtLegacyText(t, rep.Msg.Result)
	if text == "Upstream fake is unreachable." {
		t.Errorf("a client's argument made the gateway answer %q: the upstream was never asked", text)
	}
	if _, failures := upstream.BreakerCounts(u); failures != 0 {
		t.Errorf("a client's argument counted %d failures of the upstream on its breaker", failures)
	}
	// The upstream is healthy: the next, ordinary, call must reach it.
	rep = g.Send(t, legacy(`{"region":"eu"}`))
	text, isErr := rtLegacyText(t, rep.Msg.Result)
	if text != "ok" || isErr {
		t.Fatalf("a well-formed call after it: %q (isError %v), want \"ok\": one client's arguments opened the circuit for everyone", text, isErr)
	}
}

// Finding 3 (low): the Mcp-Param-* header of an integer argument is the
// argument's JSON text, not its decimal value. A 2026-07-28 client that
// writes 1e2 (or 100.0) and sends Mcp-Param-N: 100 passes the gateway's
// own check (integers compare numerically), but the upstream is sent
// "Mcp-Param-N: 1e2", which SEP-2243 upstreams refuse (-32020).
func TestRedteamIntegerHeaderIsDecimal(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false,
		`"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}]`,
		ocOK)
	u := rtConnect(t, upstream.Options{URL: up.URL})
	g := rtServe(t, nil, u.Tools())
	rep := g.Send(t, mcptest.ToolCall("g_t", `{"n":1e2}`).With("Mcp-Param-N", "100"))
	if text, isErr := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text != "ok" || isErr {
		t.Fatalf("answer %q (isError %v)", text, isErr)
	}
	hs := up.callHeaders()
	if len(hs) != 1 || hs[0].Get("Mcp-Param-N") != "100" {
		t.Fatalf("the upstream was sent Mcp-Param-N %q, want \"100\"", hs[0].Get("Mcp-Param-N"))
	}
}

// Finding 4 (low/medium): Watch with Refresh 0 refreshes at the
// upstream's ttlMs with no floor: an upstream that says ttlMs 1 has the
// gateway read its whole tools/list (up to 1,000 pages) a thousand times a
// second, for as long as the gateway runs.
func TestRedteamWatchHasATTLFloor(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false, `"tools":[{"name":"t","inputSchema":{"type":"object"}}],"ttlMs":1`, ocOK)
	u := rtConnect(t, upstream.Options{URL: up.URL})
	before := up.lists.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	u.Watch(ctx, func([]*tools.Tool) {})
	if n := up.lists.Load() - before; n > 5 {
		t.Fatalf("Watch read the upstream's tools/list %d times in 500ms at its ttlMs of 1", n)
	}
}

// Finding 5 (low): one tool with a member of the wrong type (a numeric
// title, a string hint) fails the decoding of its whole tools/list page:
// Connect fails and no tool of the upstream is served, where §10 says a
// tool the gateway cannot serve is left out and logged, the others still
// served. A Refresh fails the same way, so the served set freezes.
func TestRedteamOneBadToolSpoilsTheList(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false,
		`"tools":[{"name":"good","inputSchema":{"type":"object"}},{"name":"bad","title":5,"inputSchema":{"type":"object"}}]`,
		ocOK)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "fake", URL: up.URL, Prefix: "g_", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Connect: %v; want the tool \"bad\" left out and \"good\" served", err)
	}
	defer u.Close()
	var names []string
	for _, tl := range u.Tools() {
		names = append(names, tl.Name())
	}
	if fmt.Sprint(names) != "[g_good]" {
		t.Fatalf("served %v, want [g_good]", names)
	}
}

// rtLegacyText returns the text and isError of a 2025-era tools/call
// result (no resultType, no server _meta).
func rtLegacyText(t testing.TB, raw json.RawMessage) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tools/call result: %s", raw)
	}
	return res.Content[0].Text, res.IsError
}

// rtLegacyCall sends a 2025-11-25 tools/call that accepts a stream, and
// answers each request the server sends on it with answer(method, params)
// (a result object), POSTed back. It returns the final response's result.
func rtLegacyCall(t testing.TB, url, name, args string, answer func(method string, params json.RawMessage) string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	post := func(body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`)
	defer resp.Body.Close()
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	handle := func(data []byte) (json.RawMessage, bool) {
		var m msg
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if m.Method == "" {
			if m.Error != nil {
				t.Fatalf("error answer: %s", data)
			}
			return m.Result, true
		}
		if m.ID == nil {
			return nil, false // a notification
		}
		r := post(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + answer(m.Method, m.Params) + `}`)
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != http.StatusAccepted {
			t.Fatalf("the answer to %s was refused: HTTP %d", m.Method, r.StatusCode)
		}
		return nil, false
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		res, _ := handle(b)
		return res
	}
	var data []byte
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for {
			i := strings.Index(string(buf), "\n")
			if i < 0 {
				break
			}
			line := strings.TrimRight(string(buf[:i]), "\r")
			buf = buf[i+1:]
			switch {
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			case line == "" && data != nil:
				if res, ok := handle(data); ok {
					return res
				}
				data = nil
			}
		}
		if err != nil {
			t.Fatalf("the stream ended without an answer: %v", err)
		}
	}
}

// Checked (held): a 2025-era client's call of a 2026-07-28 upstream's tool
// that asks: the gateway asks the client on the call's stream and retries
// the upstream with its requestState and the client's answer.
func TestRedteamLegacyClientThroughModernUpstreamMRTR(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	var second atomic.Value
	up := newRTUp(t, false, `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`,
		func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
			if calls.Add(1) == 1 {
				ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form","message":"name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}}}}},"requestState":"UPSTREAM-STATE"}}`)
				return
			}
			second.Store(string(body))
			ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"done"}]}}`)
		})
	u := rtConnect(t, upstream.Options{URL: up.URL})
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())
	res := rtLegacyCall(t, g.URL, "g_t", `{"a":1}`, func(method string, _ json.RawMessage) string {
		if method != "elicitation/create" {
			t.Errorf("asked %s", method)
		}
		return `{"action":"accept","content":{"n":"x"}}`
	})
	text, isErr := rtLegacyText(t, res)
	if text != "done" || isErr {
		t.Fatalf("answer %q (isError %v)", text, isErr)
	}
	body, _ := second.Load().(string)
	if !strings.Contains(body, `"requestState":"UPSTREAM-STATE"`) || !strings.Contains(body, `"inputResponses":{"k":{"action":"accept","content":{"n":"x"}}}`) {
		t.Fatalf("the retry sent %s", body)
	}
}

// Checked (held): a 2025-era upstream's elicitation during a call is
// relayed to a 2025-era client and its answer POSTed to the upstream.
func TestRedteamLegacyUpstreamElicitRelayed(t *testing.T) {
	t.Parallel()
	var up *rtUp
	up = newRTUp(t, true, `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`,
		func(w http.ResponseWriter, r *http.Request, id string, _ []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
			_ = http.NewResponseController(w).Flush()
			var got string
			select {
			case got = <-up.answers:
			case <-time.After(30 * time.Second):
			}
			text := "no answer"
			if strings.Contains(got, `"id":"e1"`) && strings.Contains(got, `"action":"accept"`) {
				text = "accepted"
			}
			_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""+text+"\"}]}}\n\n")
		})
	u := rtConnect(t, upstream.Options{URL: up.URL})
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())
	res := rtLegacyCall(t, g.URL, "g_t", `{}`, func(string, json.RawMessage) string { return `{"action":"accept","content":{}}` })
	if text, _ := rtLegacyText(t, res); text != "accepted" {
		t.Fatalf("answer %q", text)
	}
}

// Finding 7 (low): MaxResponseBytes bounds one page of tools/list, not the
// list: 1,000 pages of MaxResponseBytes each are read and held (the parsed
// tools and a copy of their bytes), some 8 GB with the default 4 MiB, and
// read again at every refresh. Here 1,000 pages of ~4 KB are accepted with
// a limit of 4 KiB: a thousand times the limit.
func TestRedteamListingIsBounded(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("x", 3900)
	up := newRTUp(t, false, "", ocOK)
	up.listFn = func(body []byte) string {
		var req struct {
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		var n int
		fmt.Sscan(req.Params.Cursor, &n)
		next := ""
		if n < 999 {
			next = fmt.Sprintf(`,"nextCursor":"%d"`, n+1)
		}
		return fmt.Sprintf(`"tools":[{"name":"t%d","description":"%s","inputSchema":{"type":"object"}}]%s`, n, pad, next)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "fake", URL: up.URL, MaxResponseBytes: 4 << 10, Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		defer u.Close()
		t.Fatalf("Connect held a tools/list of %d tools, ~%d KB, with MaxResponseBytes 4 KiB", len(u.Tools()), len(u.Tools())*len(pad)/1000)
	}
}
