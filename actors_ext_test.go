package wymcp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestFaultAmongCallsInFlight: a fault past a method answers -32603 with
// the faulting request's id, while 100 other requests in flight still get
// their own answers (DESIGN §4).
func TestFaultAmongCallsInFlight(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 100)}
	_, hs := newTestServer(t, nil, probe)
	var wg sync.WaitGroup
	results := make([]mcptest.Reply, 100)
	for i := range results {
		wg.Go(func() {
			results[i] = hs.Send(t, mcptest.ToolCall("slow", `{"ms":300}`).WithID(i+1))
		})
	}
	for range 100 {
		<-probe.started
	}
	hs.Send(t, mcptest.ToolCall("bad_result", `{}`).WithID(1000)).ExpectError(t, 200, -32603, "1000")
	wg.Wait()
	for i, rep := range results {
		res := rep.ExpectResult(t, fmt.Sprint(i+1))
		if text, isErr := mcptest.ToolText(t, res); isErr || text != `"slept"` {
			t.Errorf("call %d: %q isError %v", i+1, text, isErr)
		}
	}
}

// TestThousandFaults: 1,000 faults in a row — past the method and inside
// the tool — leave the server answering normally: the strategy never
// stops a method for good.
func TestThousandFaults(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	for i := range 1000 {
		hs.Send(t, mcptest.ToolCall("bad_result", `{}`).WithID(i)).ExpectError(t, 200, -32603, fmt.Sprint(i))
		if i%10 == 0 {
			res := hs.Send(t, mcptest.ToolCall("panic", `{}`).WithID(i)).ExpectResult(t, fmt.Sprint(i))
			if _, isErr := mcptest.ToolText(t, res); !isErr {
				t.Fatalf("panic %d was not an isError result", i)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	hs.Send(t, mcptest.ToolCall("echo", `{"text":"still here"}`)).ExpectResult(t, "1")
	hs.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	hs.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
}

// TestSlowToolDelaysNoOther: a tool sleeping 10 s does not delay a
// concurrent fast call — the fast answer arrives while the slow call is
// still in flight (per-call isolation, DESIGN §4).
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
// tool's context (DESIGN §4: closing the request is cancellation).
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
// writes and flushes the answer while it still sleeps).
func TestStubbornToolCutOff(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	start := time.Now()
	res := hs.Send(t, mcptest.ToolCall("stubborn", `{}`)).ExpectResult(t, "1")
	if d := time.Since(start); d >= 3*time.Second {
		t.Errorf("answered after %v: the client waited for the 3 s tool, not its 50 ms deadline", d)
	}
	if text, isErr := mcptest.ToolText(t, res); !isErr || text != "Tool stubborn timed out after 50ms" {
		t.Errorf("text %q isError %v", text, isErr)
	}
}

// TestOverload: past the in-flight bound the answer is 503 with
// Retry-After and -32603 carrying the id, at once (DESIGN §4, §5).
func TestOverload(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 2)}
	_, hs := newTestServer(t, &wymcp.Options{MaxInFlight: 2}, probe)
	// Two calls that hold their places until the test lets them go, so the
	// bound is reached however slow the machine is.
	ctx, release := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { _ = hs.Abandon(ctx, mcptest.ToolCall("slow", `{"ms":60000}`).WithID(i)) })
	}
	<-probe.started
	<-probe.started
	rep := hs.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`).WithID(77))
	rep.ExpectError(t, 503, -32603, "77")
	wantHeader(t, rep, "Retry-After", "1")
	release()
	wg.Wait()
	// The bound frees as calls finish.
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep := hs.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`))
		if rep.Status == 200 {
			rep.ExpectResult(t, "1")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bound did not free: %d %s", rep.Status, rep.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShutdownAnswersAccepted: Shutdown lets every admitted call finish and
// be answered, then refuses new ones with 503 + Retry-After.
func TestShutdownAnswersAccepted(t *testing.T) {
	t.Parallel()
	probe := &testProbe{started: make(chan struct{}, 20)}
	srv, hs := newTestServer(t, nil, probe)
	var wg sync.WaitGroup
	results := make([]mcptest.Reply, 20)
	for i := range results {
		wg.Go(func() { results[i] = hs.Send(t, mcptest.ToolCall("slow", `{"ms":300}`).WithID(i)) })
	}
	for range 20 {
		<-probe.started
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	wg.Wait()
	for i, rep := range results {
		res := rep.ExpectResult(t, fmt.Sprint(i))
		if text, isErr := mcptest.ToolText(t, res); isErr || text != `"slept"` {
			t.Errorf("call %d: %q isError %v", i, text, isErr)
		}
	}
	rep := hs.Send(t, mcptest.ToolCall("echo", `{"text":"late"}`))
	rep.ExpectError(t, 503, -32603, "1")
	wantHeader(t, rep, "Retry-After", "1")
}
