package wymcp_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestFaultAmongCallsInFlight: a fault past a method answers -32603 with
// the faulting request's id, while 100 other requests in flight still get
// their own answers (docs/design.md §4).
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
// growth from one storm to the next (docs/design.md §4).
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
