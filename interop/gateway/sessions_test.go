package gateway

import (
	"context"
	"regexp"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// server-everything over Streamable HTTP keeps its sessions' state
// (toggle-simulated-logging starts, then stops, its session's logging, and
// names the session): with PerCaller (docs/design.md §10d), each caller's
// calls run in a session of its own, never another's; past MaxCallers the
// longest idle caller's session is ended, and that caller, back, starts
// afresh in a new one.
func TestPerCallerSessionsEverything(t *testing.T) {
	ctx := context.Background()
	_, ev := startEverything(t)
	url, _ := stdioGateway(t, upstream.Options{Name: "everything", Prefix: "ev_", URL: ev, PerCaller: true, MaxCallers: 2})
	toggled := regexp.MustCompile(`^(Started|Stopped) .*logging for session ([0-9a-f-]+)`)
	toggle := func(who string) (action, session string) {
		t.Helper()
		a, err := post(ctx, httpClient, url, mcptest.ToolCall("ev_toggle-simulated-logging", `{}`).With("X-Forwarded-For", who), 5, "")
		if err != nil {
			t.Fatal(err)
		}
		text, isErr, err := a.text()
		m := toggled.FindStringSubmatch(text)
		if err != nil || isErr || m == nil {
			t.Fatalf("%s: %q %v %v", who, text, isErr, err)
		}
		return m[1], m[2]
	}
	actA, a := toggle("192.0.2.1")
	actB, b := toggle("192.0.2.2")
	if actA != "Started" || actB != "Started" || a == b {
		t.Fatalf("caller a %s in session %s, b %s in %s: want each started in its own", actA, a, actB, b)
	}
	if act, s := toggle("192.0.2.1"); act != "Stopped" || s != a {
		t.Fatalf("caller a again: %s in %s, want Stopped in %s", act, s, a)
	}
	// b's logging stopped too; then a third caller takes the place of a's
	// session, idle the longest.
	toggle("192.0.2.2")
	if act, c := toggle("192.0.2.3"); act != "Started" || c == a || c == b {
		t.Fatalf("caller c: %s in %s (a %s, b %s)", act, c, a, b)
	}
	toggle("192.0.2.3") // c's logging off
	if act, a2 := toggle("192.0.2.1"); act != "Started" || a2 == a {
		t.Fatalf("caller a, back: %s in %s, want Started in a new session (was %s)", act, a2, a)
	}
	toggle("192.0.2.1")
}
