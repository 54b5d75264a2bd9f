package upstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// PerCaller's idle expiry of a 2025-era upstream's sessions
// (upstream/callers.go): a caller's session unused for the idle time is
// ended with DELETE, one with a call in flight is not, however long it
// has been since the call began, and the idle caller's next call makes a
// fresh session.
func TestPerCallerSessionIdle(t *testing.T) {
	t.Parallel()
	up := newSessionsUp(t)
	o := upstream.Options{URL: up.URL, PerCaller: true, MaxCallers: 4, CallTimeout: time.Minute}
	upstream.SetCallerIdle(&o, 100*time.Millisecond)
	u := rtConnect(t, o)
	g := rtServe(t, ocBehindProxy, u.Tools())
	as := func(who, tool string) string { return textAs(t, g, who, tool) }
	const a, b = "192.0.2.1", "192.0.2.2"

	// b's call hangs in b's session until the test ends (its client
	// leaves).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`).With("X-Forwarded-For", b)) }()
	for as(b, "g_hanging") != "1" {
	}
	bSession := as(b, "g_who")

	// a's session, used after b's last call, goes idle: it is ended.
	aSession := as(a, "g_who")
	select {
	case d := <-up.deleted:
		if d != aSession {
			t.Fatalf("DELETE of session %q, want a's %s (b's %s has a call in flight)", d, aSession, bSession)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("caller a's idle session was not ended")
	}

	// The reaper's pass that ended a's found b's idle longer, but with
	// its call in flight: it is kept.
	if got := as(b, "g_who"); got != bSession {
		t.Fatalf("caller b's session changed: %s, then %s", bSession, got)
	}
	// a, back, gets a fresh session.
	if got := as(a, "g_who"); got == aSession || got == bSession || got == "s1" {
		t.Fatalf("caller a, back, got the session %s (a's was %s, b's %s)", got, aSession, bSession)
	}
}
