package gateway_test

import (
	"net/http"
	"net/http/httptest"
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
