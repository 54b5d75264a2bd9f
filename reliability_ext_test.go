package wymcp_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// storm sends n requests from c concurrent clients, a third of them faults
// past the method, a third tool panics, a third ordinary calls, and checks
// every answer against its id.
func storm(t *testing.T, hs interface{}, n, c int, send func(i int) mcptest.Reply) (faults int64) {
	t.Helper()
	var next, faulted atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				rep := send(i)
				id := fmt.Sprint(i)
				switch i % 3 {
				case 0:
					rep.ExpectError(t, 200, -32603, id)
					faulted.Add(1)
				case 1:
					res := rep.ExpectResult(t, id)
					if text, isErr := mcptest.ToolText(t, res); !isErr || text != "Tool execution failed: internal error" {
						t.Errorf("id %s: %q %v", id, text, isErr)
					}
					faulted.Add(1)
				case 2:
					res := rep.ExpectResult(t, id)
					if text, _ := mcptest.ToolText(t, res); text != "call "+id {
						t.Errorf("id %s answered %q", id, text)
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
	wg.Wait()
	return faulted.Load()
}

func settle() (goroutines int, heap uint64) {
	for range 3 {
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// TestPanicStorm: 10,000 faults under concurrent load — every faulting
// request answered with its id (-32603 past the method, isError inside the
// tool), every other request answered correctly, and no goroutine or heap
// growth from one storm to the next (DESIGN §4; issue 6).
func TestPanicStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("storm: skipped in -short")
	}
	_, hs := newTestServer(t, nil, nil)
	sendOne := func(i int) mcptest.Reply {
		switch i % 3 {
		case 0:
			return hs.Send(t, mcptest.ToolCall("bad_result", `{}`).WithID(i))
		case 1:
			return hs.Send(t, mcptest.ToolCall("panic", `{}`).WithID(i))
		}
		return hs.Send(t, mcptest.ToolCall("echo", fmt.Sprintf(`{"text":"call %d"}`, i)).WithID(i))
	}
	const n = 7500 // two storms: 2 × 2/3 × 7,500 = 10,000 faults
	f1 := storm(t, hs, n, 16, sendOne)
	g1, h1 := settle()
	f2 := storm(t, hs, n, 16, func(i int) mcptest.Reply { return sendOne(i) })
	g2, h2 := settle()
	t.Logf("faults contained: %d; goroutines %d → %d; heap %d KiB → %d KiB", f1+f2, g1, g2, h1>>10, h2>>10)
	if f1+f2 != 10000 {
		t.Errorf("faults = %d, want 10000", f1+f2)
	}
	if g2 > g1+16 {
		t.Errorf("goroutines grew from %d to %d across a storm", g1, g2)
	}
	if h2 > h1+4<<20 {
		t.Errorf("heap grew from %d KiB to %d KiB across a storm", h1>>10, h2>>10)
	}
	hs.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
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
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("served %d, refused %d after Shutdown began", served.Load(), refused.Load())
	if served.Load() == 0 || refused.Load() == 0 {
		t.Errorf("served %d refused %d: the run did not straddle Shutdown", served.Load(), refused.Load())
	}
}
