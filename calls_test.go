package wymcp_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestSlowToolDelaysNoOther: a tool sleeping 10 s does not delay a
// concurrent fast call — the fast answer arrives while the slow call is
// still in flight (per-call isolation, docs/design.md §4).
func TestSlowToolDelaysNoOther(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 1)}
	_, hs := newTestServer(t, nil, probe)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		_ = hs.Abandon(ctx, mcptest.ToolCall("slow", `{"ms":10000}`))
	}()
	<-probe.started
	for i := range 20 {
		hs.Send(t, mcptest.ToolCall("echo", `{"text":"fast"}`).WithID(i)).ExpectResult(t, fmt.Sprint(i))
	}
	select {
	case <-slowDone:
		t.Fatal("the slow call finished before the fast ones were answered")
	default:
	}
	cancel()
	<-slowDone
}

// TestDisconnectCancelsTool: a client that goes away mid-call cancels the
// tool's context (docs/design.md §4: closing the request is cancellation).
func TestDisconnectCancelsTool(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 1)}
	_, hs := newTestServer(t, nil, probe)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Abandon(ctx, mcptest.ToolCall("slow", `{"ms":20000}`))
	}()
	<-probe.started
	cancel()
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for probe.cancelled.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the tool's context was not cancelled after the client went away")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStubbornToolCutOff: a tool that ignores its context does not hold
// the mcptest.Reply forever: past its deadline (and a grace) the call is answered
// with the deadline's isError result, and the client has it before the
// tool returns (the tool runs on the request's goroutine; the watchdog
// writes and flushes the answer while it still waits).
func TestStubbornToolCutOff(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	release := make(chan struct{})
	stubbornRelease.Store(&release)
	stubbornReturned.Store(false)
	defer close(release)
	res := hs.Send(t, mcptest.ToolCall("stubborn", `{}`)).ExpectResult(t, "1")
	if stubbornReturned.Load() {
		t.Error("answered only once the tool returned, not at its 50 ms deadline")
	}
	if text, isErr := mcptest.ToolText(t, res); !isErr || text != "Tool stubborn timed out after 50ms" {
		t.Errorf("text %q isError %v", text, isErr)
	}
}
