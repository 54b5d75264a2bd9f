package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The gateway's freshness (docs/design.md §10e): listen per view, a
// ttlMs that tells the truth, and replicas that agree.

// listenReq is a subscriptions/listen for tools with id.
func listenReq(id string) mcptest.RPC {
	return mcptest.Raw("subscriptions/listen", "", `{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":`+mcptest.Meta+`}}`)
}

// changedFrame is the list_changed of the stream whose listen had id.
func changedFrame(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
}

// listenTo opens a tools listen stream on ep and reads its ack.
func listenTo(t *testing.T, ep *mcptest.Endpoint, id string) *mcptest.Stream {
	t.Helper()
	s := ep.Listen(t, listenReq(id))
	if s.Resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: %d", s.Resp.StatusCode)
	}
	ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + id + `},"notifications":{"toolsListChanged":true}}}`
	if got := s.NextData(t); got != ack {
		t.Fatalf("first message %s, want the ack %s", got, ack)
	}
	return s
}

// endFrame is the graceful end of the stream whose listen had id, from a
// view named name.
func endFrame(name, id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"` + name + `","version":"1.0.0"},"io.modelcontextprotocol/subscriptionId":` + id + `}}}`
}

// discoverCaps are the capabilities ep's server/discover advertises.
func discoverCaps(t *testing.T, ep *mcptest.Endpoint) string {
	t.Helper()
	res := ep.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
	return mcptest.CompactJSON(t, mustMarshal(t, res["capabilities"]))
}

// TestListenPerView: every view advertises listChanged and serves listen;
// an upstream's change is told on the views whose list it changed, and
// only there, and a Reload that changes a view's list is told on it.
func TestListenPerView(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"))
	b := serveOrigin(t, says("two", "b two"))
	g, url := open(t, gateway.Options{
		Upstreams: []upstream.Options{a.up("a", "a_"), b.up("b", "b_")},
		Views: []gateway.View{
			{Path: "/a", Tools: []string{"a_*"}, Name: "view-a"},
			{Path: "/b", Tools: []string{"b_*"}, Name: "view-b"},
		},
	})
	va, vb := endpoint(url, "/a", "view-a"), endpoint(url, "/b", "view-b")
	for _, ep := range []*mcptest.Endpoint{va, vb} {
		if caps := discoverCaps(t, ep); caps != `{"tools":{"listChanged":true}}` {
			t.Errorf("%s advertises %s", ep.URL, caps)
		}
	}
	sa, sb := listenTo(t, va, "1"), listenTo(t, vb, "2")

	// Upstream a adds a tool: view /a is told, once its list shows it.
	if err := a.srv.SetTools(says("one", "a one"), says("new", "a new")); err != nil {
		t.Fatal(err)
	}
	if got := sa.NextData(t); got != changedFrame("1") {
		t.Fatalf("view /a: %s, want %s", got, changedFrame("1"))
	}
	if got := toolNames(t, va); !slices.Equal(got, []string{"a_new", "a_one"}) {
		t.Errorf("view /a lists %q after its notification", got)
	}

	// A reload that changes view /b's patterns (and not /a's list) is told
	// on /b.
	err := g.Reload(t.Context(), gateway.Update{
		Upstreams: []upstream.Options{a.up("a", "a_"), b.up("b", "b_")},
		Views:     []gateway.View{{Path: "/a", Tools: []string{"a_*"}}, {Path: "/b", Tools: []string{"b_*", "a_one"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.NextData(t); got != changedFrame("2") {
		t.Fatalf("view /b: %s, want %s", got, changedFrame("2"))
	}
	// A drain tells each stream what it has not yet been told before its
	// end: /a was never told of the reload, which left its list alone,
	// and /b was told of a's tool by nothing but the reload.
	if err := g.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := sa.NextData(t); got != endFrame("view-a", "1") {
		t.Errorf("view /a after the drain: %s, want its end", got)
	}
	if got := sb.NextData(t); got != endFrame("view-b", "2") {
		t.Errorf("view /b after the drain: %s, want its end", got)
	}
}

// TestListTTL: a view's tools/list answers a ttlMs no longer than the
// interval at which its set may change: the shortest of its upstreams'
// refresh intervals (Options.Refresh, or the upstream's own ttlMs, at
// least a second), a pending upstream's longest wait between tries; the
// configured one when no upstream is there.
func TestListTTL(t *testing.T) {
	t.Parallel()
	fast := serveOrigin(t, says("f", "fast")) // ttlMs 20: read every second
	slow, err := wymcp.New(originInfo, &wymcp.Options{CacheTTL: 3 * time.Second}, says("s", "slow"))
	if err != nil {
		t.Fatal(err)
	}
	slowEP := mcptest.Serve(t, slow, originInfo)
	down := serveOrigin(t, says("d", "down"))
	down.down.Store(true)
	refreshed := func(o upstream.Options, d time.Duration) upstream.Options { o.Refresh = d; return o }
	slowUp := upstream.Options{Name: "slow", URL: slowEP.URL, Prefix: "s_", ConnectTimeout: 30 * time.Second}

	for _, c := range []struct {
		name   string
		server wymcp.Options
		ups    []upstream.Options
		ttlMs  float64
	}{
		{"no upstream", wymcp.Options{ToolsChange: true}, nil, 300_000},
		{"no upstream, configured", wymcp.Options{ToolsChange: true, CacheTTL: 90 * time.Second}, nil, 90_000},
		{"refresh", wymcp.Options{}, []upstream.Options{refreshed(fast.up("f", "f_"), 7*time.Second)}, 7_000},
		{"upstream ttlMs, at least a second", wymcp.Options{}, []upstream.Options{fast.up("f", "f_")}, 1_000},
		{"upstream ttlMs", wymcp.Options{}, []upstream.Options{slowUp}, 3_000},
		{"the shortest", wymcp.Options{}, []upstream.Options{slowUp, refreshed(fast.up("f", "f_"), 2500*time.Millisecond)}, 2_500},
		{"configured shorter", wymcp.Options{CacheTTL: 2 * time.Second}, []upstream.Options{refreshed(fast.up("f", "f_"), 7*time.Second)}, 2_000},
		{"pending", wymcp.Options{}, []upstream.Options{slowUp, down.up("d", "d_")}, 3_000},
		{"pending alone", wymcp.Options{}, []upstream.Options{refreshed(fast.up("f", "f_"), time.Hour), down.up("d", "d_")}, 36_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.server.Logger = nil
			_, url := open(t, gateway.Options{Server: c.server, Upstreams: c.ups})
			ep := endpoint(url, "", info.Name)
			res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
			if res["ttlMs"] != c.ttlMs {
				t.Errorf("ttlMs %v, want %v", res["ttlMs"], c.ttlMs)
			}
			if caps := discoverCaps(t, ep); caps != `{"tools":{"listChanged":true}}` {
				t.Errorf("advertises %s", caps)
			}
		})
	}

	// A fixed set (no upstream, no ToolsChange) advertises nothing and
	// serves no listen, as a plain server.
	_, fixedURL := open(t, gateway.Options{Tools: []*tools.Tool{says("local", "l")}})
	fixed := endpoint(fixedURL, "", info.Name)
	if caps := discoverCaps(t, fixed); caps != `{"tools":{}}` {
		t.Errorf("a fixed set advertises %s", caps)
	}
	fixed.Send(t, listenReq("1")).ExpectError(t, 404, -32601, "1")
	res := fixed.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(300_000) {
		t.Errorf("a fixed set: ttlMs %v, want 300000", res["ttlMs"])
	}

	// A reload that removes the upstreams gives the configured ttlMs back.
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{slowUp}})
	ep := endpoint(url, "", info.Name)
	if err := g.Reload(t.Context(), gateway.Update{}); err != nil {
		t.Fatal(err)
	}
	res = ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["ttlMs"] != float64(300_000) {
		t.Errorf("after the reload: ttlMs %v, want 300000", res["ttlMs"])
	}
}

// TestReplicasAgree: two replicas over one upstream whose tools change;
// only one has read the change. A call of the new tool on the other reads
// the upstream once and is served; a name no upstream may serve reads
// none; unknown names read each upstream at most once per interval, and
// concurrent ones share one read.
func TestReplicasAgree(t *testing.T) {
	t.Parallel()
	o := serveOrigin(t, says("one", "one"))
	other := serveOrigin(t, says("x", "x"))
	// Neither replica polls within the test: only calls and reloads read.
	ups := []upstream.Options{
		func() upstream.Options { u := o.up("o", "o_"); u.Refresh = time.Hour; return u }(),
		func() upstream.Options { u := other.up("other", "p_"); u.Refresh = time.Hour; return u }(),
	}
	g1, url1 := open(t, gateway.Options{Upstreams: ups})
	g2, url2 := open(t, gateway.Options{Upstreams: ups})
	gateway.SetUnknownEvery(g2, time.Hour)
	r1, r2 := endpoint(url1, "", info.Name), endpoint(url2, "", info.Name)

	if err := o.srv.SetTools(says("one", "one"), says("late", "late")); err != nil {
		t.Fatal(err)
	}
	if err := g1.Reload(t.Context(), gateway.Update{Upstreams: ups}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, r1); !slices.Equal(got, []string{"o_late", "o_one", "p_x"}) {
		t.Fatalf("replica 1 lists %q", got)
	}
	if got := toolNames(t, r2); !slices.Equal(got, []string{"o_one", "p_x"}) {
		t.Fatalf("replica 2 lists %q before any call", got)
	}
	listsO, listsOther := o.lists.Load(), other.lists.Load()
	s2 := listenTo(t, r2, "9")

	// The first call of the new tool on replica 2 is served.
	if text, isErr := callText(t, r2, "o_late"); text != `"late"` || isErr {
		t.Fatalf("o_late on replica 2: %q isError %v", text, isErr)
	}
	if n := o.lists.Load() - listsO; n != 1 {
		t.Errorf("upstream o was read %d times, want 1", n)
	}
	if n := other.lists.Load() - listsOther; n != 0 {
		t.Errorf("upstream other (prefix p_) was read %d times, want 0", n)
	}
	if got := toolNames(t, r2); !slices.Equal(got, []string{"o_late", "o_one", "p_x"}) {
		t.Errorf("replica 2 lists %q after the call", got)
	}
	if got := s2.NextData(t); got != changedFrame("9") {
		t.Errorf("replica 2's listener: %s, want %s", got, changedFrame("9"))
	}

	// Unknown names: answered as any unknown tool (-32602), byte for byte
	// what a view without the hook answers; within the interval they read
	// nothing more, concurrent or not, and a name no upstream's prefix
	// starts reads nothing at all.
	unknown := r2.Send(t, mcptest.ToolCall("o_nothing", `{}`))
	unknown.ExpectError(t, 200, -32602, "1")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r := r2.Send(t, mcptest.ToolCall("o_nothing", `{}`))
			if string(r.Raw) != string(unknown.Raw) {
				t.Errorf("unknown tool: %s, want %s", r.Raw, unknown.Raw)
			}
		})
	}
	wg.Wait()
	r2.Send(t, mcptest.ToolCall("zzz", `{}`)).ExpectError(t, 200, -32602, "1")
	if n := o.lists.Load() - listsO; n != 1 {
		t.Errorf("upstream o was read %d times in all, want 1", n)
	}
	if n := other.lists.Load() - listsOther; n != 0 {
		t.Errorf("upstream other was read %d times, want 0", n)
	}
}

// TestUnknownCoalesced: calls of unknown names that come together share
// one read of the upstream.
func TestUnknownCoalesced(t *testing.T) {
	t.Parallel()
	o := serveOrigin(t, says("one", "one"))
	up := o.up("o", "o_")
	up.Refresh = time.Hour
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{up}})
	gateway.SetUnknownEvery(g, time.Hour)
	ep := endpoint(url, "", info.Name)
	before := o.lists.Load()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			ep.Send(t, mcptest.ToolCall("o_none", `{}`)).ExpectError(t, 200, -32602, "1")
		})
	}
	wg.Wait()
	if n := o.lists.Load() - before; n != 1 {
		t.Errorf("upstream read %d times by 16 calls, want 1", n)
	}
}

// mustMarshal is v as JSON.
func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestListenThroughChangeStream: an upstream that serves listen itself is
// followed on it, so a client listening on the gateway hears of the
// upstream's new tool though the gateway's refresh interval is an hour.
func TestListenThroughChangeStream(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(originInfo, &wymcp.Options{ToolsChange: true}, says("one", "one"))
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, originInfo)
	up := upstream.Options{Name: "o", URL: ep.URL, Prefix: "o_", Refresh: time.Hour, ConnectTimeout: 30 * time.Second}
	_, url := open(t, gateway.Options{Upstreams: []upstream.Options{up}})
	gw := endpoint(url, "", info.Name)
	s := listenTo(t, gw, "4")
	if err := srv.SetTools(says("one", "one"), says("two", "two")); err != nil {
		t.Fatal(err)
	}
	// The gateway reads the upstream when its stream opens too, which may
	// find the new tool first: either way one notification tells it.
	if got := s.NextData(t); got != changedFrame("4") {
		t.Fatalf("got %s, want %s", got, changedFrame("4"))
	}
	if got := toolNames(t, gw); !slices.Equal(got, []string{"o_one", "o_two"}) {
		t.Errorf("after the notification: %q", got)
	}
}
