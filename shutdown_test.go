package wymcp_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestOverload: past the in-flight bound the answer is 503 with
// Retry-After and -32603 carrying the id, at once (docs/design.md §4, §5).
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

// TestShutdownUnderLoad: Shutdown during a load run loses no accepted
// request: every request is answered in full, either served (200, its own
// answer) or refused (503 with Retry-After and its id) — none dropped.
func TestShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	srv, hs := newTestServer(t, nil, nil)
	var served, refused, next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := int(next.Add(1))
				rep := hs.Send(t, mcptest.ToolCall("echo", fmt.Sprintf(`{"text":"call %d"}`, i)).WithID(i))
				switch rep.Status {
				case 200:
					res := rep.ExpectResult(t, fmt.Sprint(i))
					if text, _ := mcptest.ToolText(t, res); text != fmt.Sprintf("call %d", i) {
						t.Errorf("id %d answered %q", i, text)
					}
					served.Add(1)
				case 503:
					rep.ExpectError(t, 503, -32603, fmt.Sprint(i))
					wantHeader(t, rep, "Retry-After", "1")
					refused.Add(1)
				default:
					t.Errorf("id %d: status %d %s", i, rep.Status, rep.Raw)
				}
				if t.Failed() {
					return
				}
			}
		})
	}
	// The run straddles Shutdown: it begins once calls were served, and
	// the load stops once calls were refused (however long a loaded
	// machine takes to make either, at most 30 s).
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); served.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); refused.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("served %d, refused %d after Shutdown began", served.Load(), refused.Load())
	if served.Load() == 0 || refused.Load() == 0 {
		t.Errorf("served %d refused %d: the run did not straddle Shutdown", served.Load(), refused.Load())
	}
}
