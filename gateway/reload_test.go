package gateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestReload: an upstream added is served, one removed is gone while a
// call to it that was under way is answered, one unchanged keeps its
// connection; the views' patterns change with it.
func TestReload(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	held := tools.Must(tools.New("held", "Waits.", func(context.Context, struct{}) (string, error) {
		close(entered)
		<-release
		return "answered", nil
	}))
	a := serveOrigin(t, says("one", "a one"), held)
	b := serveOrigin(t, says("two", "b two"))
	c := serveOrigin(t, says("three", "c three"))
	var log mcptest.SyncBuffer
	g, url := open(t, gateway.Options{
		Server:    serverLogging(&log),
		Upstreams: []upstream.Options{a.up("a", "a_"), b.up("b", "")},
		Views:     []gateway.View{{Path: "/all"}, {Path: "/some", Tools: []string{"two"}}},
	})
	all, some := endpoint(url, "/all", info.Name), endpoint(url, "/some", info.Name)
	waitTools(t, all, "a_one", "a_held", "two")
	waitTools(t, some, "two")

	call := make(chan string, 1)
	go func() {
		rep := all.Send(t, mcptest.ToolCall("a_held", `{}`).WithID(7))
		call <- string(rep.Raw)
	}()
	<-entered
	err := g.Reload(t.Context(), gateway.Update{
		Upstreams: []upstream.Options{b.up("b", ""), c.up("c", "c_")},
		Views:     []gateway.View{{Path: "/all"}, {Path: "/some", Tools: []string{"c_*"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, all); strings.Join(got, " ") != "c_three two" {
		t.Errorf("after the reload: %q", got)
	}
	if got := toolNames(t, some); strings.Join(got, " ") != "c_three" {
		t.Errorf("the view after the reload: %q", got)
	}
	close(release)
	if got := <-call; !strings.Contains(got, `"text":"\"answered\""`) || strings.Contains(got, `"isError":true`) {
		t.Errorf("the call under way to the removed upstream: %s", got)
	}
	all.Send(t, mcptest.ToolCall("a_one", `{}`)).ExpectError(t, 200, -32602, "1")
	if !strings.Contains(log.String(), `msg="upstreams reloaded" upstreams=2 served=2 added=c reconnected="" removed=a`) {
		t.Errorf("the reload's log line does not say what changed:\n%s", log.String())
	}

	// Same says b changed: connected afresh.
	err = g.Reload(t.Context(), gateway.Update{
		Upstreams: []upstream.Options{b.up("b", ""), c.up("c", "c_")},
		Same:      func(current, next upstream.Options) bool { return next.Name != "b" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `added="" reconnected=b removed=""`) {
		t.Errorf("b was not reconnected:\n%s", log.String())
	}
	if text, _ := callText(t, all, "two"); text != `"b two"` {
		t.Errorf("two after b reconnected: %q", text)
	}
}

// TestReloadRefused: an update that cannot be served changes nothing and
// says why; after Close, Reload is ErrClosed.
func TestReloadRefused(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"))
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{a.up("a", "")}, Views: []gateway.View{{Path: "/v", Tools: []string{"one"}}}})
	ep := endpoint(url, "/v", info.Name)
	for _, c := range []struct {
		u    gateway.Update
		want string
	}{
		{gateway.Update{Upstreams: []upstream.Options{a.up("x", ""), a.up("x", "")}}, `gateway: Upstreams[1].Name: "x" is another upstream's`},
		{gateway.Update{Views: []gateway.View{{Path: "/v", Tools: []string{"["}}}}, `gateway: Views[0].Tools[0]: "[" is not a served name nor a path.Match pattern`},
		{gateway.Update{Views: []gateway.View{{Path: "/w"}}}, `gateway: the update's Views[0] is "/w", the gateway's "/v": views are added, removed or moved by a new Gateway`},
		{gateway.Update{Views: []gateway.View{{Path: "/v"}, {Path: "/w"}}}, `gateway: the update has 2 views, the gateway 1: views are added or removed by a new Gateway`},
	} {
		if err := g.Reload(t.Context(), c.u); err == nil || err.Error() != c.want {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
		t.Errorf("tools %q after refused reloads", got)
	}
	g.Close()
	if err := g.Reload(t.Context(), gateway.Update{}); !errors.Is(err, gateway.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestReloadWhole: a reload whose set one view refuses (a scoped tool on
// a view without auth) changes no view, though another view's new set
// was served first: it is put back.
func TestReloadWhole(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"))
	e := serveOrigin(t, says("new", "e new"))
	d := serveOrigin(t, says("scoped", "d scoped"))
	g, url := open(t, gateway.Options{
		Upstreams: []upstream.Options{a.up("a", "")},
		Views:     []gateway.View{{Path: "/first", Tools: []string{"one", "new"}}, {Path: "/second"}},
	})
	first, second := endpoint(url, "/first", info.Name), endpoint(url, "/second", info.Name)
	do := d.up("d", "")
	do.Scopes = []string{"s"}
	err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{a.up("a", ""), e.up("e", ""), do}})
	if err == nil || !strings.HasPrefix(err.Error(), `view /second: wymcp: tool "scoped" requires scopes ["s"]`) {
		t.Fatalf("%v, want /second's refusal", err)
	}
	for _, ep := range []*mcptest.Endpoint{first, second} {
		if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
			t.Errorf("%s: tools %q after a refused reload, want [one]", ep.URL, got)
		}
	}
}

// TestReloadConnectsPending: a reload connects a pending upstream at once,
// afresh, its options unchanged: once Reload returns, its tools are
// served, without waiting for its next try.
func TestReloadConnectsPending(t *testing.T) {
	t.Parallel()
	late := serveOrigin(t, says("hello", "late hello"))
	late.down.Store(true)
	a := serveOrigin(t, says("one", "a one"))
	ups := []upstream.Options{a.up("a", ""), late.up("late", "")}
	g, url := open(t, gateway.Options{Upstreams: ups})
	ep := endpoint(url, "", info.Name)
	if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
		t.Fatalf("tools %q while late is down", got)
	}
	late.down.Store(false)
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: ups}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, ep); strings.Join(got, " ") != "hello one" {
		t.Errorf("tools %q once the reload returned, want late's too", got)
	}
}
