package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// Issue 41's red team: the gateway's freshness against slow upstreams.

// holding is an upstream whose tools/list can be held: while hold is set,
// each tools/list is reported on held and answered only once release is
// closed (or its client gives up).
type holding struct {
	url     string
	hold    atomic.Bool
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func serveHolding(t *testing.T, ts ...*tools.Tool) *holding {
	t.Helper()
	s, err := wymcp.New(originInfo, nil, ts...)
	if err != nil {
		t.Fatal(err)
	}
	h := &holding{held: make(chan struct{}, 16), release: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" && h.hold.Load() {
			h.held <- struct{}{}
			select {
			case <-h.release:
			case <-r.Context().Done():
				return
			}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(h.let) // before hs.Close: a held request would hold it
	h.url = hs.URL
	return h
}

// let answers every tools/list held, and those to come.
func (h *holding) let() { h.once.Do(func() { close(h.release) }) }

// TestSlowUpstreamHoldsNoOther: an upstream whose tools/list hangs (for
// as long as its ConnectTimeout allows) costs its own freshness only.
// Serving another upstream's change reads every upstream's refresh
// interval for the ttlMs; that read once waited for the hung upstream's
// tools/list to end, under the gateway's lock, so that a call of the other
// upstream's new tool waited out its 5 s and was answered as unknown, and
// the readiness endpoint waited with it.
func TestSlowUpstreamHoldsNoOther(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"))
	b := serveHolding(t, says("two", "b two"))
	upA := a.up("a", "a_")
	upA.Refresh = time.Hour
	// b sets no Refresh: its interval is its own ttlMs (5 minutes).
	upB := upstream.Options{Name: "b", URL: b.url, Prefix: "b_", ConnectTimeout: time.Minute}
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{upA, upB}})
	ep := endpoint(url, "", info.Name)

	// A call of a name b may serve reads b again: its tools/list hangs.
	b.hold.Store(true)
	missing := make(chan mcptest.Reply, 1)
	go func() { missing <- ep.Send(t, mcptest.ToolCall("b_missing", `{}`)) }()
	<-b.held

	// Meanwhile a adds a tool, and a call of it on this replica reads a
	// and is served.
	if err := a.srv.SetTools(says("one", "a one"), says("new", "a new")); err != nil {
		t.Fatal(err)
	}
	if text, isErr := callText(t, ep, "a_new"); text != `"a new"` || isErr {
		t.Fatalf("a_new: %q isError %v", text, isErr)
	}
	rec := httptest.NewRecorder()
	g.ReadinessHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ready", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("readiness %d while b's tools/list hangs, want 200", rec.Code)
	}
	b.let()
	(<-missing).ExpectError(t, 200, -32602, "1")
}

// changing serves an upstream whose tools change on demand and which
// serves listen (Options.ToolsChange), so that the gateway follows its
// change stream.
func changing(t *testing.T) (*wymcp.Server, string) {
	t.Helper()
	s, err := wymcp.New(originInfo, &wymcp.Options{ToolsChange: true, CacheTTL: time.Second}, says("one", "one"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s, hs.URL
}

// ours counts the goroutines running the gateway's or an upstream's
// code: after Close there are none.
func ours() (n int, stacks string) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "wymcp/wymcp/gateway.") || strings.Contains(g, "wymcp/wymcp/upstream.") {
			if strings.Contains(g, "gateway_test.") && !strings.Contains(g, "wymcp/wymcp/upstream.(") {
				continue // the test's own
			}
			n++
			stacks += g + "\n\n"
		}
	}
	return n, stacks
}

// TestReloadUnderChangesAndUnknownCalls: Reloads that replace, remove and
// bring back an upstream whose change stream is telling of changes, while
// calls of unknown names read it and listeners come and go, race with
// nothing (-race), and once the gateway is closed no goroutine of its or
// of an upstream's is left: no change stream, watch, read or retirement.
// Not parallel: it counts goroutines.
func TestReloadUnderChangesAndUnknownCalls(t *testing.T) {
	srv, url := changing(t)
	opt := func(timeout time.Duration) upstream.Options {
		return upstream.Options{Name: "c", URL: url, Prefix: "c_", ConnectTimeout: timeout, CallTimeout: time.Second}
	}
	g, err := gateway.New(t.Context(), gateway.Options{Info: info, Upstreams: []upstream.Options{opt(20 * time.Second)},
		Server: wymcp.Options{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	gateway.SetUnknownEvery(g, 0)
	hs := httptest.NewServer(g)
	ep := endpoint(hs.URL, "", info.Name)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the upstream's tools change, told on its stream
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = srv.SetTools(says("one", "one"), says(fmt.Sprintf("n%d", i%4), "n"))
			time.Sleep(time.Millisecond)
		}
	})
	for range 4 {
		wg.Go(func() { // unknown names, each reading the upstream
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ep.Send(t, mcptest.ToolCall(fmt.Sprintf("c_x%d", i), `{}`))
			}
		})
	}
	wg.Go(func() { // listeners come and go
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := ep.Listen(t, listenReq("1"))
			_ = s.Resp.Body.Close()
		}
	})
	for i := range 30 {
		var ups []upstream.Options
		switch i % 3 {
		case 0:
			ups = []upstream.Options{opt(20 * time.Second)}
		case 1:
			ups = []upstream.Options{opt(30 * time.Second)} // another: replaced
		}
		if err := g.Reload(t.Context(), gateway.Update{Upstreams: ups}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := ours(); n == 0 {
		t.Fatal("no goroutine of the gateway's counted while it serves: ours() counts nothing")
	}
	close(stop)
	wg.Wait()
	hs.Close()
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
	var n int
	var stacks string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, stacks = ours(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left after Shutdown:\n%s", n, stacks)
		}
	}
}
