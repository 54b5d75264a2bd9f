//go:build linux

package upstream_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// PerCaller's idle expiry of children (upstream/callers.go): a caller's
// child unused for the idle time is stopped (its process is gone), one
// with a call in flight is not, however long it has been since the call
// began, and the idle caller's next call gets a fresh child.
func TestStdioPerCallerIdle(t *testing.T) {
	t.Parallel()
	o := stdioOpts(t, "legacy")
	o.PerCaller, o.MaxCallers = true, 4
	o.CallTimeout = time.Minute
	upstream.SetCallerIdle(&o, 100*time.Millisecond)
	g := newOCGateway(t, ocBehindProxy, o)
	as := func(who, tool string) string { return textAs(t, g.Endpoint, who, tool) }
	const a, b = "192.0.2.1", "192.0.2.2"

	// b's call hangs on b's child until the test ends (its client
	// leaves); b's child is the one that counts it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = g.Abandon(ctx, mcptest.ToolCall("g_hang", `{}`).With("X-Forwarded-For", b)) }()
	for as(b, "g_hangs") != "1" {
	}
	bPID := as(b, "g_pid")

	// a's child, used after b's last call, goes idle: it is stopped.
	aPID := as(a, "g_pid")
	waitGone(t, aPID)

	// The reaper's pass that stopped a's child found b's idle longer, but
	// with its call in flight: it runs still, the same child.
	if _, err := os.Stat("/proc/" + bPID); err != nil {
		t.Fatalf("caller b's child, its call in flight, is gone: %v", err)
	}
	if got := as(b, "g_hangs"); got != "1" {
		t.Fatalf("caller b's child counts %s hanging calls", got)
	}
	if got := as(b, "g_pid"); got != bPID {
		t.Fatalf("caller b's child changed: %s, then %s", bPID, got)
	}

	// a, back, gets a fresh child.
	if got := as(a, "g_pid"); got == aPID {
		t.Fatalf("caller a's child %s outlived its idle time", got)
	}
}

// waitGone waits until the process pid has ended and been reaped (no
// /proc entry: not even a zombie).
func waitGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat("/proc/" + pid)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s still there (%v)", pid, err)
		}
		time.Sleep(5 * time.Millisecond) // another process's end: nothing to wait on
	}
}
