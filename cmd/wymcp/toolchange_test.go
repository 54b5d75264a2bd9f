package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestConformanceToolChange: -tools conformance serves a set that changes,
// as the suite's listen checks need: server/discover advertises
// tools.listChanged, a listen stream is acknowledged, and each call of
// test_trigger_tool_change shows or hides test_dynamic_tool and is told on
// the stream; a stream that asked for prompts only is told nothing, and
// the stop ends both streams with their results.
func TestConformanceToolChange(t *testing.T) {
	t.Parallel()
	s := start(t, "-tools", "conformance")
	status, got := s.post(t, t.Context(), "server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
	if status != http.StatusOK || !strings.Contains(got, `"capabilities":{"tools":{"listChanged":true}}`) {
		t.Fatalf("server/discover: %d %s", status, got)
	}
	listen := func(id, filter string) *mcptest.Stream {
		st := s.ep.Listen(t, mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{"notifications":`+filter+`,`+meta+`}}`))
		if st.Resp.StatusCode != http.StatusOK {
			t.Fatalf("listen: %d", st.Resp.StatusCode)
		}
		return st
	}
	tools := listen("1", `{"toolsListChanged":true}`)
	prompts := listen("2", `{"promptsListChanged":true}`)
	if got := tools.NextData(t); got != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("ack %s", got)
	}
	if got := prompts.NextData(t); got != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":2},"notifications":{}}}` {
		t.Fatalf("ack %s", got)
	}
	listed := func() []string {
		rep := s.ep.Send(t, mcptest.Call("tools/list", ""))
		var names []string
		for _, tool := range rep.ExpectResult(t, "1")["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		return names
	}
	for _, want := range []bool{true, false} {
		status, got := s.post(t, t.Context(), "tools/call", "test_trigger_tool_change", callBody("test_trigger_tool_change", `{}`))
		if status != http.StatusOK || strings.Contains(got, `"isError"`) {
			t.Fatalf("test_trigger_tool_change: %d %s", status, got)
		}
		if got := tools.NextData(t); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}` {
			t.Fatalf("after the trigger: %s", got)
		}
		if names := listed(); slices.Contains(names, "test_dynamic_tool") != want || !slices.Contains(names, "test_trigger_tool_change") {
			t.Errorf("tools/list after the trigger: %q (test_dynamic_tool listed: want %v)", names, want)
		}
	}
	// The stop's drain ends both streams at once (its handlers return, so
	// the stop does not wait for them: start's cleanup checks it ends).
	s.cancel()
	end := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete",` + strings.TrimSuffix(conformanceInfo, "}}") + `},"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
	}
	if got := tools.NextData(t); got != end("1") {
		t.Errorf("at the stop: %s, want %s", got, end("1"))
	}
	if got := prompts.NextData(t); got != end("2") {
		t.Errorf("the prompts stream: %s, want its result %s", got, end("2"))
	}
}
