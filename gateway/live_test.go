package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// versioned is a tool set whose "version" tool answers v, with v-1 more
// tools, so that the list changes with it.
func versioned(v int) []*tools.Tool {
	ts := []*tools.Tool{says("version", fmt.Sprint(v))}
	for i := 1; i < v; i++ {
		ts = append(ts, says(fmt.Sprintf("more_%d", i), fmt.Sprint(i)))
	}
	return ts
}

// TestLiveTools: an upstream's tools change while calls run through two
// views; the gateway serves each new set without a restart: no call fails
// or is crossed, and the new tools are callable where the view's patterns
// pick them (and only there).
func TestLiveTools(t *testing.T) {
	t.Parallel()
	o := serveOrigin(t, versioned(1)...)
	_, url := open(t, gateway.Options{
		Upstreams: []upstream.Options{o.up("o", "o_")},
		Views:     []gateway.View{{Path: "/all"}, {Path: "/version", Tools: []string{"o_version"}}},
	})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer hc.CloseIdleConnections()

	var (
		wg          sync.WaitGroup
		calls, errs atomic.Int64
		stop        = make(chan struct{})
		seen        sync.Map // the versions answered
	)
	for w := range 8 {
		view := []string{"/all", "/version"}[w%2]
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := w*1_000_000 + i + 1
				text, isErr, err := mcptest.CallText(context.Background(), hc, url+view, "o_version", id)
				if err != nil || isErr {
					if errs.Add(1) <= 5 {
						t.Errorf("call %d on %s: %q isError %v, %v", id, view, text, isErr, err)
					}
					continue
				}
				seen.Store(text, true)
				calls.Add(1)
			}
		})
	}
	all, version := endpoint(url, "/all", info.Name), endpoint(url, "/version", info.Name)
	for v := 2; v <= 4; v++ {
		if err := o.srv.SetTools(versioned(v)...); err != nil {
			t.Fatal(err)
		}
		want := []string{"o_version"}
		for i := 1; i < v; i++ {
			want = append(want, fmt.Sprintf("o_more_%d", i))
		}
		waitTools(t, all, want...)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, ok := seen.Load(`"4"`); !ok; _, ok = seen.Load(`"4"`) {
		if time.Now().After(deadline) {
			t.Fatal("no call answered by the last version")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if got := toolNames(t, version); !slices.Equal(got, []string{"o_version"}) {
		t.Errorf("/version serves %q, want [o_version]", got)
	}
	if text, isErr := callText(t, all, "o_more_3"); text != `"3"` || isErr {
		t.Errorf("a tool the upstream added: %q isError %v", text, isErr)
	}
	if calls.Load() == 0 || errs.Load() != 0 {
		t.Errorf("%d calls, %d failed", calls.Load(), errs.Load())
	}
	t.Logf("%d calls through the changes, none failed", calls.Load())
}
