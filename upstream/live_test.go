package upstream_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// versioned is a tool set whose "version" tool answers v, with v-1 more
// tools so that the list changes with it.
func versioned(v int) []*tools.Tool {
	ts := []*tools.Tool{tools.Must(tools.New("version", "Says its version.", func(context.Context, struct{}) (int, error) { return v, nil }))}
	for i := 1; i < v; i++ {
		ts = append(ts, tools.Must(tools.New(fmt.Sprintf("more_%d", i), "More.", func(context.Context, struct{}) (int, error) { return i, nil })))
	}
	return ts
}

// TestWatchReplacesTools: the upstream's tools change while calls run
// through the gateway; Watch, at the upstream's ttlMs, hands the new tools
// to the gateway's SetTools, and no call fails or is answered by a tool
// that does not exist.
func TestWatchReplacesTools(t *testing.T) {
	origin, err := wymcp.New(upstreamInfo, &wymcp.Options{CacheTTL: 20 * time.Millisecond}, versioned(1)...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(origin)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "origin", URL: hs.URL, Prefix: "o_", Refresh: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	gateway, err := wymcp.New(gatewayInfo, nil, u.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	gw := mcptest.Serve(t, gateway, gatewayInfo)
	var swaps atomic.Int32
	go u.Watch(ctx, func(ts []*tools.Tool) {
		if err := gateway.SetTools(ts...); err != nil {
			t.Error(err)
		}
		swaps.Add(1)
	})

	var (
		wg    sync.WaitGroup
		calls atomic.Int64
		stop  = make(chan struct{})
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rep := gw.Send(t, mcptest.ToolCall("o_version", `{}`).WithID(w+1))
				text, isErr := mcptest.ToolText(t, rep.ExpectResult(t, fmt.Sprint(w+1)))
				if isErr || text == "" {
					t.Errorf("call: %s", rep.Raw)
					return
				}
				calls.Add(1)
			}
		}()
	}
	for v := 2; v <= 5; v++ {
		time.Sleep(60 * time.Millisecond)
		if err := origin.SetTools(versioned(v)...); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(u.Tools()) != 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := len(u.Tools()); n != 5 || swaps.Load() == 0 {
		t.Fatalf("%d tools after the upstream's last change, %d swaps", n, swaps.Load())
	}
	rep := gw.Send(t, mcptest.ToolCall("o_more_4", `{}`))
	if text, _ := mcptest.ToolText(t, rep.ExpectResult(t, "1")); text != "4" {
		t.Errorf("a tool the upstream added: %s", rep.Raw)
	}
	t.Logf("%d calls, %d swaps", calls.Load(), swaps.Load())
}
