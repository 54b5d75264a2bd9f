package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestViews: each view is its own endpoint, at its path: its tools/list
// holds only the tools its patterns pick, a call to a tool outside it is
// answered as any unknown tool is, byte for byte, and its serverInfo
// names it. A path that is no view's is 404.
func TestViews(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"), says("two", "a two"))
	b := serveOrigin(t, says("one", "b one"))
	_, url := open(t, gateway.Options{
		Tools:     []*tools.Tool{says("local", "mine")},
		Upstreams: []upstream.Options{a.up("a", "a_"), b.up("b", "b_")},
		Views: []gateway.View{
			{Path: "/mcp/a", Tools: []string{"a_*", "local"}},
			{Path: "/mcp/b", Tools: []string{"b_one"}, Name: "team-b"},
			{Path: "/mcp/all"},
		},
	})
	va, vb, all := endpoint(url, "/mcp/a", info.Name), endpoint(url, "/mcp/b", "team-b"), endpoint(url, "/mcp/all", info.Name)
	waitTools(t, va, "a_one", "a_two", "local")
	waitTools(t, vb, "b_one")
	waitTools(t, all, "a_one", "a_two", "b_one", "local")
	if text, _ := callText(t, vb, "b_one"); text != `"b one"` {
		t.Errorf("b_one on /mcp/b: %q", text)
	}
	if text, _ := callText(t, va, "a_two"); text != `"a two"` {
		t.Errorf("a_two on /mcp/a: %q", text)
	}
	// a_one is served, but not by /mcp/b: the answer is the unknown
	// tool's, the name aside.
	outside := vb.Send(t, mcptest.ToolCall("a_one", `{}`))
	outside.ExpectError(t, 200, -32602, "1")
	unknown := vb.Send(t, mcptest.ToolCall("zz_no", `{}`))
	if got, want := strings.ReplaceAll(string(outside.Raw), "a_one", "NAME"), strings.ReplaceAll(string(unknown.Raw), "zz_no", "NAME"); got != want {
		t.Errorf("a tool outside the view: %s\nan unknown tool: %s", got, want)
	}
	for _, path := range []string{"/mcp", "/mcp/a/", "/mcp/c"} {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

// askTool is a multi-round-trip tool: it asks for a name, then greets.
var askTool = tools.Must(tools.NewRaw("ask", "Asks a name.", []byte(`{"type":"object"}`),
	func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
		var answer protocol.ElicitResult
		form := protocol.ElicitRequest{Message: "Name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
		if err := tools.Ask(ctx, tools.Elicit("name", form, &answer)); err != nil {
			return nil, err
		}
		var f struct {
			Name string `json:"name"`
		}
		_ = answer.DecodeContent(&f)
		return protocol.TextResult("Hello, " + f.Name + "!"), nil
	}))

// TestViewStateIsolated: a requestState sealed by one view is refused by
// another serving the same tool (-32602, as a foreign state is), with a
// ring given and without one; it opens on its own view.
func TestViewStateIsolated(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for _, c := range []struct {
		name string
		keys [][]byte
	}{{"random ring", nil}, {"ring given", [][]byte{key}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := gateway.Options{Tools: []*tools.Tool{askTool}, Views: []gateway.View{{Path: "/a"}, {Path: "/b"}}}
			opts.Server.StateKeys = c.keys
			_, url := open(t, opts)
			va, vb := endpoint(url, "/a", info.Name), endpoint(url, "/b", info.Name)
			first := mcptest.ToolCall("ask", `{}`).WithCapabilities(`{"elicitation":{}}`)
			_, state := va.Send(t, first).ExpectInputRequired(t, "1")
			retry := first.WithID(2).Retry(`{"name":{"action":"accept","content":{"name":"Ada"}}}`, state)
			rep := vb.Send(t, retry)
			rep.ExpectError(t, 200, -32602, "2")
			if rep.Msg.Error.Message != "Invalid params: requestState is invalid or has expired" {
				t.Errorf("on the other view: %s", rep.Raw)
			}
			res := va.Send(t, retry).ExpectResult(t, "2")
			if text, _ := mcptest.ToolText(t, res); text != "Hello, Ada!" {
				t.Errorf("on its own view: %q", text)
			}
		})
	}
}

// TestDrainEveryView: one drain for all: the gateway's Drain makes every
// view a lame duck, and its readiness 503.
func TestDrainEveryView(t *testing.T) {
	t.Parallel()
	g, _ := open(t, gateway.Options{Tools: []*tools.Tool{says("x", "x")}, Views: []gateway.View{{Path: "/a"}, {Path: "/b"}}})
	if code := readyz(t, g); code != 200 {
		t.Fatalf("readiness %d, want 200", code)
	}
	if err := g.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a", "/b"} {
		if !g.View(p).Draining() {
			t.Errorf("view %s is not draining", p)
		}
	}
	if code := readyz(t, g); !g.Draining() || code != 503 {
		t.Errorf("readiness %d (draining %v), want 503", code, g.Draining())
	}
}

// TestRouteAllocatesNothing: finding a request's view allocates nothing (the hot
// path is the view's, a plain *wymcp.Server).
func TestRouteAllocatesNothing(t *testing.T) {
	g, err := gateway.New(t.Context(), gateway.Options{Info: info, Tools: []*tools.Tool{says("x", "x")}, Views: []gateway.View{{Path: "/mcp/a"}, {Path: "/mcp/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Shutdown(context.Background())
	path := strings.Clone("/mcp/b")
	if n := testing.AllocsPerRun(100, func() {
		if g.View(path) == nil {
			panic("no view")
		}
	}); n != 0 {
		t.Errorf("%v allocations per route", n)
	}
	if g.View("/mcp") != nil || g.View("") != nil {
		t.Error("a view where there is none")
	}
}
