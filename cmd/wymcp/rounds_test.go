package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// Multi-round-trip calls through the binary: the demo's elicitation round,
// the key file shared by replicas and across a restart, and the warning
// when there is none.

// withCaps is a tools/call body of name declaring caps.
func withCaps(id, name, caps, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{}` + extra +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
}

// roundState returns the requestState of an input_required answer, and
// fails the test if the answer is not one.
func roundState(t *testing.T, status int, body string) string {
	t.Helper()
	var m struct {
		Result struct {
			ResultType   string `json:"resultType"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || status != http.StatusOK ||
		m.Result.ResultType != "input_required" || m.Result.RequestState == "" {
		t.Fatalf("want a 200 input_required result with a requestState; got %d %s", status, body)
	}
	return m.Result.RequestState
}

// TestDemoAskName is the demo's elicitation round, byte for byte, and its
// refusal of a client that cannot answer.
func TestDemoAskName(t *testing.T) {
	t.Parallel()
	s := start(t)
	status, got := s.post(t, t.Context(), "tools/call", "ask_name", withCaps("1", "ask_name", `{"elicitation":{}}`, ""))
	state := roundState(t, status, got)
	want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"What should I call you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1,"maxLength":100}},"required":["name"]}}}},"requestState":"` +
		state + `",` + serverInfo + `}}`
	if got != want {
		t.Errorf("round 1:\n got %s\nwant %s", got, want)
	}
	answer := `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"`
	status, got = s.post(t, t.Context(), "tools/call", "ask_name", withCaps("2", "ask_name", `{"elicitation":{}}`, answer))
	want = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, Ada!"}],"resultType":"complete",` + serverInfo + `}}`
	if status != http.StatusOK || got != want {
		t.Errorf("round 2: %d %s\nwant 200 %s", status, got, want)
	}
	declined := `,"inputResponses":{"name":{"action":"decline"}},"requestState":"` + state + `"`
	if _, got = s.post(t, t.Context(), "tools/call", "ask_name", withCaps("3", "ask_name", `{"elicitation":{}}`, declined)); !strings.Contains(got, "you chose to decline") {
		t.Errorf("declined: %s", got)
	}
	status, got = s.post(t, t.Context(), "tools/call", "ask_name", callBody("ask_name", `{}`))
	want = `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"elicitation":{}}}}}`
	if status != http.StatusBadRequest || got != want {
		t.Errorf("without elicitation: %d %s\nwant 400 %s", status, got, want)
	}
}

// TestStateKeyFile: servers started with one key file serve each other's
// rounds (replicas) and a restarted server serves the rounds of the one
// before; a server without the file refuses them.
func TestStateKeyFile(t *testing.T) {
	t.Parallel()
	file := keyFile(t, "# newest first\n"+b64(32)+"\n")
	a := start(t, "-tools", "conformance", "-state-key-file", file)
	b := start(t, "-tools", "conformance", "-state-key-file", file)
	other := start(t, "-tools", "conformance")

	const name = "test_input_required_result_multi_round"
	caps := `{"elicitation":{}}`
	s1 := askState(t, a, name, withCaps("1", name, caps, ""))
	step1 := `,"inputResponses":{"step1":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + s1 + `"`
	s2 := askState(t, b, name, withCaps("2", name, caps, step1))
	step2 := `,"inputResponses":{"step2":{"action":"accept","content":{"color":"blue"}}},"requestState":"` + s2 + `"`

	// a stops; a new server with the same file takes round 3.
	a.cancel()
	if err := <-a.done; err != nil {
		t.Fatal(err)
	}
	a.done <- nil // for its cleanup
	restarted := start(t, "-tools", "conformance", "-state-key-file", file)
	status, got := restarted.post(t, t.Context(), "tools/call", name, withCaps("3", name, caps, step2))
	if status != http.StatusOK || !strings.Contains(got, `"text":"Ada likes blue."`) {
		t.Errorf("round 3 after a restart: %d %s", status, got)
	}
	status, got = other.post(t, t.Context(), "tools/call", name, withCaps("4", name, caps, step2))
	if status != http.StatusOK || !strings.Contains(got, `"code":-32602`) {
		t.Errorf("round 3 on a server without the key: %d %s", status, got)
	}
}

// askState posts a tools/call of name that must answer input_required, and
// returns its requestState.
func askState(t *testing.T, s *server, name, body string) string {
	t.Helper()
	status, got := s.post(t, t.Context(), "tools/call", name, body)
	return roundState(t, status, got)
}

// TestStateKeyWarning: without -state-key-file the server warns, once, at
// Warn on stderr, that rounds will not survive a restart or cross
// replicas; with it, it does not.
func TestStateKeyWarning(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"without": nil,
		"with":    {"-state-key-file", keyFile(t, b64(32))},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stderr mcptest.SyncBuffer
			ctx, cancel := context.WithCancel(t.Context())
			lines := make(chan string, 1)
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), lineWriter(lines), &stderr)
			}()
			<-lines // listening: the warning, if any, was logged before
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			log := stderr.String()
			warned := strings.Contains(log, "level=WARN") && strings.Contains(log, "no -state-key-file") &&
				strings.Contains(log, "will not survive a restart, nor be served by another replica")
			if warned != (name == "without") {
				t.Errorf("warning logged: %v; stderr:\n%s", warned, log)
			}
		})
	}
}

// lineWriter sends what is written to it on lines, without blocking.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	select {
	case w <- string(p):
	default:
	}
	return len(p), nil
}

// TestConformanceRounds: the request-state fixture's final text says
// state-ok (its scenario requires it), and the capabilities fixture asks
// only what the request declares.
func TestConformanceRounds(t *testing.T) {
	t.Parallel()
	s := start(t, "-tools", "conformance")
	const rs = "test_input_required_result_request_state"
	state := askState(t, s, rs, withCaps("1", rs, `{"elicitation":{}}`, ""))
	retry := `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":"` + state + `"`
	if _, got := s.post(t, t.Context(), "tools/call", rs, withCaps("2", rs, `{"elicitation":{}}`, retry)); !strings.Contains(got, "state-ok") {
		t.Errorf("request state: %s", got)
	}
	const caps = "test_input_required_result_capabilities"
	_, got := s.post(t, t.Context(), "tools/call", caps, withCaps("3", caps, `{"sampling":{}}`, ""))
	if !strings.Contains(got, `"greeting":{"method":"sampling/createMessage"`) || strings.Contains(got, "elicitation/create") || strings.Contains(got, "roots/list") {
		t.Errorf("sampling only: %s", got)
	}
	if _, got = s.post(t, t.Context(), "tools/call", caps, withCaps("4", caps, `{}`, "")); !strings.Contains(got, `"resultType":"complete"`) {
		t.Errorf("no capability: %s", got)
	}
}
