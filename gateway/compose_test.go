package gateway_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestCompose: local tools and two upstreams, one without a prefix,
// served side by side; calls reach the right server.
func TestCompose(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("greet", "hello from a"))
	b := serveOrigin(t, says("echo", "echo from b"), says("hidden", "no"))
	bo := b.up("b", "b_")
	bo.Exclude = []string{"hidden"}
	_, url := open(t, gateway.Options{
		Tools:     []*tools.Tool{says("local", "mine")},
		Upstreams: []upstream.Options{a.up("a", ""), bo},
	})
	ep := endpoint(url, "/any/path", info.Name)
	waitTools(t, ep, "local", "greet", "b_echo")
	for _, c := range []struct{ tool, want string }{
		{"greet", `"hello from a"`}, {"b_echo", `"echo from b"`}, {"local", `"mine"`},
	} {
		if text, isErr := callText(t, ep, c.tool); text != c.want || isErr {
			t.Errorf("%s: %q (isError %v), want %q", c.tool, text, isErr, c.want)
		}
	}
}

// TestConflictLeftOut: a local tool and an upstream's of the same served
// name: the local one is served (first in order), the upstream's left out
// and logged once, not per call or refresh; the upstream's other tools
// are served. New does not fail.
func TestConflictLeftOut(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("echo", "a's echo"), says("greet", "hi"))
	var log mcptest.SyncBuffer
	g, url := open(t, gateway.Options{
		Server:    serverLogging(&log),
		Tools:     []*tools.Tool{says("echo", "the local echo")},
		Upstreams: []upstream.Options{a.up("a", "")},
	})
	_ = g
	ep := endpoint(url, "", info.Name)
	waitTools(t, ep, "echo", "greet")
	if text, _ := callText(t, ep, "echo"); text != `"the local echo"` {
		t.Errorf("echo: %q, want the local one", text)
	}
	const want = `level=WARN msg="tool left out: its name is served already; give one of them a prefix, exclude or rename it" tool=echo upstream=a served_by="the local tools"`
	if !strings.Contains(log.String(), want) {
		t.Fatalf("not logged: %s\n%s", want, log.String())
	}
	// A change of a (a tool added) is served; the conflict, unchanged, is
	// not logged again.
	if err := a.srv.SetTools(says("echo", "a's echo"), says("greet", "hi"), says("more", "more")); err != nil {
		t.Fatal(err)
	}
	waitTools(t, ep, "echo", "greet", "more")
	callText(t, ep, "echo")
	if n := strings.Count(log.String(), "tool left out"); n != 1 {
		t.Errorf("the conflict was logged %d times, want once:\n%s", n, log.String())
	}
}

// TestConflictDoesNotFreeze is the regression test of issue 40: one
// upstream listing a name another serves used to freeze every upstream's
// changes (the whole set was refused while the clash lasted). Now b's
// colliding tool is left out, and a's new tool is served.
func TestConflictDoesNotFreeze(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("greet", "a greets"))
	b := serveOrigin(t, says("hello", "b hellos"))
	var log mcptest.SyncBuffer
	_, url := open(t, gateway.Options{
		Server:    serverLogging(&log),
		Upstreams: []upstream.Options{a.up("a", ""), b.up("b", "")},
	})
	ep := endpoint(url, "", info.Name)
	waitTools(t, ep, "greet", "hello")
	// b now lists a's name: left out, the rest of b served.
	if err := b.srv.SetTools(says("hello", "b hellos"), says("greet", "b greets")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, &log, `msg="tool left out: its name is served already; give one of them a prefix, exclude or rename it" tool=greet upstream=b served_by="upstream a"`)
	// a adds a tool: served, the clash notwithstanding.
	if err := a.srv.SetTools(says("greet", "a greets"), says("fresh", "new from a")); err != nil {
		t.Fatal(err)
	}
	waitTools(t, ep, "greet", "hello", "fresh")
	if text, _ := callText(t, ep, "fresh"); text != `"new from a"` {
		t.Errorf("fresh: %q", text)
	}
	if text, _ := callText(t, ep, "greet"); text != `"a greets"` {
		t.Errorf("greet: %q, want a's (first in order)", text)
	}
}

// TestLateUpstreamTakesItsPlace: an upstream down at New is pending (New
// does not fail; the others are served); once it answers, its tools are
// served in its place in the order: its tool wins the name a later
// upstream's held, which is left out from then on, and logged.
func TestLateUpstreamTakesItsPlace(t *testing.T) {
	t.Parallel()
	late := serveOrigin(t, says("x", "late's x"), says("y", "late's y"))
	late.down.Store(true)
	b := serveOrigin(t, says("x", "b's x"))
	var log mcptest.SyncBuffer
	g, url := open(t, gateway.Options{
		Server:    serverLogging(&log),
		Upstreams: []upstream.Options{late.up("late", ""), b.up("b", "")},
	})
	ep := endpoint(url, "", info.Name)
	if got := toolNames(t, ep); len(got) != 1 || got[0] != "x" {
		t.Fatalf("tools %q at start, want [x]", got)
	}
	if text, _ := callText(t, ep, "x"); text != `"b's x"` {
		t.Errorf("x: %q, want b's while late is down", text)
	}
	if !strings.Contains(log.String(), `msg="upstream not connected; the others are served, and it is tried again in the background" upstream=late`) {
		t.Errorf("the upstream down was not logged:\n%s", log.String())
	}
	if code := readyz(t, g); code != 200 {
		t.Errorf("readiness %d with one upstream of two served, want 200", code)
	}
	late.down.Store(false)
	waitTools(t, ep, "x", "y")
	waitLog(t, &log, `tool=x upstream=b served_by="upstream late"`)
	if text, _ := callText(t, ep, "x"); text != `"late's x"` {
		t.Errorf("x: %q, want late's (first in order)", text)
	}
}

// TestReadinessNoTool: with nothing served (the only upstream down, no
// local tool), the gateway is not ready: 503; it is once a tool is.
func TestReadinessNoTool(t *testing.T) {
	t.Parallel()
	down := serveOrigin(t, says("x", "x"))
	down.down.Store(true)
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{down.up("down", "")}})
	if code := readyz(t, g); code != 503 {
		t.Errorf("readiness %d with no tool served, want 503", code)
	}
	down.down.Store(false)
	waitTools(t, endpoint(url, "", info.Name), "x")
	if code := readyz(t, g); code != 200 {
		t.Errorf("readiness %d with a tool served, want 200", code)
	}
}

// TestNewRefuses: what cannot be served fails New, naming it.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts gateway.Options
		want string
	}{
		{"two views without paths", gateway.Options{Views: []gateway.View{{}, {}}}, "gateway: Views[0].Path: is required when there is more than one view"},
		{"relative path", gateway.Options{Views: []gateway.View{{Path: "mcp"}}}, `gateway: Views[0].Path: "mcp" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{"path twice", gateway.Options{Views: []gateway.View{{Path: "/a"}, {Path: "/a"}}}, `gateway: Views[1].Path: "/a" is another view's`},
		{"bad pattern", gateway.Options{Views: []gateway.View{{Path: "/a", Tools: []string{"[x"}}}}, `gateway: Views[0].Tools[0]: "[x" is not a served name nor a path.Match pattern`},
		{"path not clean", gateway.Options{Views: []gateway.View{{Path: "/mcp/"}}}, `gateway: Views[0].Path: "/mcp/" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{"path with a wildcard", gateway.Options{Views: []gateway.View{{Path: "/a"}, {Path: "/mcp/{x}"}}}, `gateway: Views[1].Path: "/mcp/{x}" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{"path with a space", gateway.Options{Views: []gateway.View{{Path: "/mcp a"}}}, `gateway: Views[0].Path: "/mcp a" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{"empty pattern", gateway.Options{Views: []gateway.View{{Path: "/a", Tools: []string{"x", ""}}}}, `gateway: Views[0].Tools[1]: "" is not a served name nor a path.Match pattern`},
		{"upstream without name", gateway.Options{Upstreams: []upstream.Options{{URL: "http://127.0.0.1:1/"}}}, "gateway: Upstreams[0].Name: is required"},
		{"upstream name twice", gateway.Options{Upstreams: []upstream.Options{{Name: "a"}, {Name: "a"}}}, `gateway: Upstreams[1].Name: "a" is another upstream's`},
		{"short state key", gateway.Options{Info: info, Server: serverKeys([]byte("short")), Views: []gateway.View{{Path: "/a"}}}, "gateway: Options.Server.StateKeys[0] is 5 bytes; each key must be 32 bytes (AES-256)"},
		{"no info", gateway.Options{}, "wymcp: the server Implementation needs a name and a version"},
	} {
		if _, err := gateway.New(t.Context(), c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		// Options.Validate says the same, before anything is built, as an
		// *OptionError naming the field.
		var oe *gateway.OptionError
		if err := c.opts.Validate(); strings.HasPrefix(c.want, "gateway: Views") || strings.HasPrefix(c.want, "gateway: Upstreams") {
			if !errors.As(err, &oe) || err.Error() != c.want || !strings.HasPrefix(c.want, "gateway: "+oe.Field+": ") {
				t.Errorf("%s: Validate: %v, want %q", c.name, err, c.want)
			}
		} else if err != nil {
			t.Errorf("%s: Validate: %v, want nil (wymcp.New's to refuse)", c.name, err)
		}
	}
}
