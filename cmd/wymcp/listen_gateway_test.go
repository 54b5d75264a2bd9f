package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestGatewayListen: the gateway binary (-upstreams) advertises
// tools.listChanged and serves subscriptions/listen, bounded per caller
// by -max-listen-streams-per-caller; a client holding a stream hears of a
// tool its upstream (a -tools conformance server, which tells its own
// listeners) adds, and of a SIGHUP that changes the set. The real signal,
// to the real program in a child process.
func TestGatewayListen(t *testing.T) {
	t.Parallel()
	conf := start(t, "-tools", "conformance")
	_, b := serveOrigin(t, nil, says("two", "b two"))
	file := upstreamsFile(t, "", fmt.Sprintf("upstreams:\n  - {name: c, url: %q, prefix: c_}\n", conf.ep.URL))
	ch := startChild(t, "-tools", "none", "-upstreams", file, "-max-listen-streams-per-caller", "1")
	rep := ch.ep.Send(t, mcptest.Call("server/discover", ""))
	if !strings.Contains(string(rep.Raw), `"capabilities":{"tools":{"listChanged":true}}`) {
		t.Fatalf("server/discover: %s", rep.Raw)
	}
	listen := func(id string) *mcptest.Stream {
		return ch.ep.Listen(t, mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta+`}}`))
	}
	st := listen("1")
	if st.Resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", st.Resp.StatusCode)
	}
	if got := st.NextData(t); got != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}` {
		t.Fatalf("ack %s", got)
	}
	second := listen("2")
	if second.Resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a second stream of one caller past -max-listen-streams-per-caller 1: %d, want 429", second.Resp.StatusCode)
	}
	second.Close()
	changed := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`

	// The upstream adds a tool (its trigger, called through the gateway):
	// the gateway hears it on the upstream's own stream and tells its
	// listener, though its refresh interval is the upstream's 5 minutes.
	if text, isErr := callText(t, ch.ep, "c_test_trigger_tool_change", `{}`); isErr {
		t.Fatalf("the trigger: %s", text)
	}
	if got := st.NextData(t); got != changed {
		t.Fatalf("after the upstream's change: %s, want %s", got, changed)
	}
	if got := toolNames(t, ch.ep); !slices.Contains(got, "c_test_dynamic_tool") {
		t.Errorf("after the notification: tools %q, want c_test_dynamic_tool among them", got)
	}

	// A SIGHUP that adds an upstream is told too.
	upstreamsFile(t, file, fmt.Sprintf("upstreams:\n  - {name: c, url: %q, prefix: c_}\n  - {name: b, url: %q, prefix: b_}\n", conf.ep.URL, b))
	if err := ch.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if got := st.NextData(t); got != changed {
		t.Fatalf("after the SIGHUP: %s, want %s", got, changed)
	}
	if got := toolNames(t, ch.ep); !slices.Contains(got, "b_two") {
		t.Errorf("after the SIGHUP's notification: tools %q, want b_two among them", got)
	}
}
