package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// sessionsUp is a 2025-era upstream that keeps state in its sessions: each
// initialize makes one (s1, s2, ...), a request in a session it does not
// know is answered 404, DELETE ends one. Its tool who answers the session
// its call ran in; ask asks the client (elicitation/create on the call's
// stream) and answers the session the client's answer came in, and the
// answer.
type sessionsUp struct {
	URL     string
	mu      sync.Mutex
	n       int
	live    map[string]bool
	deleted chan string
	answers map[string]chan string // by the elicitation's id
	hanging int                    // hang calls received
}

func newSessionsUp(t *testing.T) *sessionsUp {
	t.Helper()
	u := &sessionsUp{live: map[string]bool{}, deleted: make(chan string, 64), answers: map[string]chan string{}}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

func (u *sessionsUp) serve(w http.ResponseWriter, r *http.Request) {
	session := r.Header.Get("Mcp-Session-Id")
	u.mu.Lock()
	known := u.live[session]
	u.mu.Unlock()
	if r.Method == http.MethodDelete {
		u.mu.Lock()
		delete(u.live, session)
		u.mu.Unlock()
		u.deleted <- session
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := string(m.ID)
	if m.Method == "initialize" {
		u.mu.Lock()
		u.n++
		session = fmt.Sprintf("s%d", u.n)
		u.live[session] = true
		u.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", session)
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"sessions","version":"1"}}}`)
		return
	}
	if m.Method == "server/discover" {
		ocWrite(w, 404, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
		return
	}
	if !known {
		ocWrite(w, 404, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32001,"message":"Session not found"}}`)
		return
	}
	switch {
	case m.Method == "" && m.ID != nil: // the client's answer to ask
		u.mu.Lock()
		ch := u.answers[id]
		u.mu.Unlock()
		if ch != nil {
			ch <- session + " " + string(m.Result)
		}
		w.WriteHeader(http.StatusAccepted)
	case m.ID == nil: // a notification
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "tools/list":
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"tools":[{"name":"who","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}},{"name":"forget","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}},{"name":"hanging","inputSchema":{"type":"object"}}]}}`)
	case m.Method == "tools/call" && m.Params.Name == "forget":
		// The server forgets the session, as a restarted one would.
		u.mu.Lock()
		delete(u.live, session)
		u.mu.Unlock()
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"forgot"}]}}`)
	case m.Method == "tools/call" && m.Params.Name == "hang":
		u.mu.Lock()
		u.hanging++
		u.mu.Unlock()
		<-r.Context().Done()
	case m.Method == "tools/call" && m.Params.Name == "hanging":
		u.mu.Lock()
		n := u.hanging
		u.mu.Unlock()
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`+fmt.Sprint(n)+`"}]}}`)
	case m.Method == "tools/call" && m.Params.Name == "who":
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`+session+`"}]}}`)
	case m.Method == "tools/call" && m.Params.Name == "ask":
		ask := `"ask-` + session + `"`
		ch := make(chan string, 1)
		u.mu.Lock()
		u.answers[ask] = ch
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"elicitation/create\",\"params\":{\"message\":\"Your name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}\n\n", ask)
		w.(http.Flusher).Flush()
		var got string
		select {
		case got = <-ch:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", id, session+" asked; answered in "+got)
	default:
		ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

// PerCaller with a 2025-era upstream at a URL: each caller's calls run in
// an upstream session of its own (its own initialize), the same one each
// time, never another's nor the shared one the gateway lists in; past
// MaxCallers a new caller takes the place of the longest idle, whose
// session is ended (DELETE); Close ends them all.
func TestPerCallerSessions(t *testing.T) {
	t.Parallel()
	up := newSessionsUp(t)
	u := rtConnect(t, upstream.Options{URL: up.URL, PerCaller: true, MaxCallers: 2})
	g := rtServe(t, ocBehindProxy, u.Tools())
	who := func(caller string) string { return textAs(t, g, caller, "g_who") }
	a, b := who("192.0.2.1"), who("192.0.2.2")
	if a == b || a == "s1" || b == "s1" {
		t.Fatalf("caller a's session %s, b's %s, the shared one s1", a, b)
	}
	if again := who("192.0.2.1"); again != a {
		t.Fatalf("caller a's session changed: %s, then %s", a, again)
	}
	// A third caller takes the place of a's session, idle the longest
	// after b's call: a's is ended.
	who("192.0.2.2")
	c := who("192.0.2.3")
	if c == a || c == b || c == "s1" {
		t.Fatalf("caller c got the session %s (a %s, b %s)", c, a, b)
	}
	if d := <-up.deleted; d != a {
		t.Fatalf("DELETE of session %q, want a's %s", d, a)
	}
	// a, back, takes the place of b's, idle the longest now.
	a2 := who("192.0.2.1")
	if a2 == a || a2 == b || a2 == c {
		t.Fatalf("caller a, back, got the session %s", a2)
	}
	if d := <-up.deleted; d != b {
		t.Fatalf("DELETE of session %q, want b's %s", d, b)
	}
	_ = u.Close()
	ended := map[string]bool{}
	for range 3 { // the shared one, and c's and a's
		ended[<-up.deleted] = true
	}
	if !ended["s1"] || !ended[c] || !ended[a2] {
		t.Fatalf("Close ended %v, want s1, %s and %s", ended, c, a2)
	}
}

// A per-caller session's request to the client during a call (an
// elicitation) goes to that call's 2025-era client, and the client's
// answer goes back in that caller's session.
func TestPerCallerSessionElicitation(t *testing.T) {
	t.Parallel()
	up := newSessionsUp(t)
	u := rtConnect(t, upstream.Options{URL: up.URL, PerCaller: true})
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())
	var asked []string
	res := rtLegacyCall(t, g.URL, "g_ask", `{}`, func(method string, params json.RawMessage) string {
		asked = append(asked, method+" "+string(params))
		return `{"action":"accept","content":{"name":"Ada"}}`
	})
	text, isErr := rtLegacyText(t, res)
	if text != `s2 asked; answered in s2 {"action":"accept","content":{"name":"Ada"}}` || isErr {
		t.Fatalf("answer %q (isError %v)", text, isErr)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `elicitation/create {"message":"Your name?"`) {
		t.Fatalf("the client was asked %q", asked)
	}
}

// A 2026-07-28 upstream keeps no sessions: PerCaller changes nothing.
func TestPerCallerStateless(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false, `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`,
		func(w http.ResponseWriter, r *http.Request, id string, _ []byte) {
			ocWrite(w, 200, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"session `+r.Header.Get("Mcp-Session-Id")+`"}]}}`)
		})
	u := rtConnect(t, upstream.Options{URL: up.URL, PerCaller: true})
	if v := u.Version(); v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	g := rtServe(t, nil, u.Tools())
	ocExpectText(t, g.Send(t, mcptest.ToolCall("g_t", `{}`)), "session ", false)
}

// A caller's session the upstream lost (404) is made again for that
// caller's calls, the call retried in the new one; another caller's
// session is untouched.
func TestPerCallerSessionLost(t *testing.T) {
	t.Parallel()
	up := newSessionsUp(t)
	u := rtConnect(t, upstream.Options{URL: up.URL, PerCaller: true})
	g := rtServe(t, ocBehindProxy, u.Tools())
	as := func(caller, tool string) string { return textAs(t, g, caller, tool) }
	a, b := as("192.0.2.1", "g_who"), as("192.0.2.2", "g_who")
	as("192.0.2.1", "g_forget")
	if a2 := as("192.0.2.1", "g_who"); a2 == a || a2 == b || a2 == "s1" {
		t.Fatalf("caller a's session after it was lost: %s (was %s; b's %s)", a2, a, b)
	}
	if b2 := as("192.0.2.2", "g_who"); b2 != b {
		t.Fatalf("caller b's session changed: %s, then %s", b, b2)
	}
}

// MaxCallers sessions, each with a call in progress: a new caller is
// answered at once, busy (docs/design.md §10a's row).
func TestPerCallerSessionsBusy(t *testing.T) {
	t.Parallel()
	up := newSessionsUp(t)
	u := rtConnect(t, upstream.Options{URL: up.URL, PerCaller: true, MaxCallers: 1, CallTimeout: time.Minute})
	g := rtServe(t, ocBehindProxy, u.Tools())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`).With("X-Forwarded-For", "192.0.2.1")) }()
	for {
		// a's hang holds a's session once the upstream counts it.
		rep := g.Send(t, mcptest.ToolCall("g_hanging", `{}`).With("X-Forwarded-For", "192.0.2.1"))
		if text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text == "1" {
			break
		}
	}
	ocToolError(t, g.Send(t, mcptest.ToolCall("g_who", `{}`).With("X-Forwarded-For", "192.0.2.2")),
		"Upstream fake keeps a session for each of 1 callers, its limit, and each has a call in progress; retry later.")
}
