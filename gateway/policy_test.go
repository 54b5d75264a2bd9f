package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// rule is a rule of the tool alone (these tests have no auth).
func rule(allow func(t *access.Tool) bool) access.Rule {
	return access.RuleFunc(func(_ context.Context, req *access.Request) (bool, error) { return allow(req.Tool), nil })
}

// TestPolicyPlaces: a rule on a view, an upstream and an override each
// hides what it denies, all must allow; a rule reads the served name, the
// upstream and the served hints (an override's); an upstream's rate limit
// counts its tools' calls together, through every view; a reload changes a
// view's rule.
func TestPolicyPlaces(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"), says("two", "a two"), says("three", "a three"))
	b := serveOrigin(t, says("one", "b one"))
	ro := true
	upA := a.up("a", "a_")
	upA.Overrides = map[string]upstream.Override{
		"one": {Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &ro}},
		"two": {Allow: rule(func(*access.Tool) bool { return false })},
	}
	upA.RateLimit = access.Limit{Calls: 2, Per: time.Hour}
	upB := b.up("b", "b_")
	upB.Allow = rule(func(t *access.Tool) bool { return t.Upstream != "b" })
	readOnly := rule(func(t *access.Tool) bool { return t.Annotations["readOnlyHint"] == true })
	views := []gateway.View{{Path: "/mcp/ro", Allow: readOnly}, {Path: "/mcp/all"}}
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{upA, upB}, Views: views})
	vro, all := endpoint(url, "/mcp/ro", info.Name), endpoint(url, "/mcp/all", info.Name)
	waitTools(t, all, "a_one", "a_three")
	waitTools(t, vro, "a_one")

	// Denied is unknown, byte for byte but the name.
	denied := all.Send(t, mcptest.ToolCall("b_one", `{}`))
	unknown := all.Send(t, mcptest.ToolCall("zz_no", `{}`))
	unknown.ExpectError(t, 200, -32602, "1")
	if got, want := string(denied.Raw), `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: b_one"}}`; got != want {
		t.Errorf("denied: %s, want %s", got, want)
	}
	vro.Send(t, mcptest.ToolCall("a_three", `{}`)).ExpectError(t, 200, -32602, "1")

	// a's limit: two calls of its tools, through any view.
	if text, _ := callText(t, all, "a_one"); text != `"a one"` {
		t.Errorf("a_one: %q", text)
	}
	if text, _ := callText(t, vro, "a_one"); text != `"a one"` {
		t.Errorf("a_one on /mcp/ro: %q", text)
	}
	rep := all.Send(t, mcptest.ToolCall("a_three", `{}`))
	rep.ExpectError(t, http.StatusTooManyRequests, -32603, "1")
	if rep.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After: %v", rep.Header)
	}

	// A reload changes a view's rule: /mcp/all now hides a_three.
	views[1].Allow = rule(func(t *access.Tool) bool { return t.Name != "a_three" })
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{upA, upB}, Views: views, Same: func(_, _ upstream.Options) bool { return true }}); err != nil {
		t.Fatal(err)
	}
	waitTools(t, all, "a_one")
	waitTools(t, vro, "a_one")
}

// A rate limit that could not be counted is an option error.
func TestPolicyInvalidLimit(t *testing.T) {
	t.Parallel()
	err := (&gateway.Options{Views: []gateway.View{{Path: "/x", RateLimit: access.Limit{Calls: 1}}}}).Validate()
	var oe *gateway.OptionError
	if want := "gateway: Views[0].RateLimit: per must be a positive duration, not 0s"; err == nil || err.Error() != want || !errors.As(err, &oe) {
		t.Fatalf("Validate = %v, want %s", err, want)
	}
}

// An upstream's or an override's limit is checked too; an override that
// only guards changes something.
func TestPolicyUpstreamOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		up   upstream.Options
		want string
	}{
		{upstream.Options{Name: "a", URL: "http://127.0.0.1:1/mcp", RateLimit: access.Limit{Calls: -1, Per: time.Second}},
			"gateway: Upstreams[0].RateLimit: calls must be positive, not -1"},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1:1/mcp", Overrides: map[string]upstream.Override{"x": {RateLimit: access.Limit{Per: time.Second}}}},
			`gateway: Upstreams[0].Overrides["x"].RateLimit: calls must be positive, not 0`},
		{upstream.Options{Name: "a", URL: "http://127.0.0.1:1/mcp", Overrides: map[string]upstream.Override{"x": {Allow: rule(func(*access.Tool) bool { return true })}}}, ""},
	} {
		err := (&gateway.Options{Upstreams: []upstream.Options{c.up}}).Validate()
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("Validate = %s, want %q", got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("Validate = nil, want %s", c.want)
		}
	}
}

// ptrRule is a rule compared by identity, as a *policy.Rule is.
type ptrRule struct{ allow func(*access.Tool) bool }

func (r *ptrRule) Allow(_ context.Context, req *access.Request) (bool, error) {
	return r.allow(req.Tool), nil
}

// With Update.Same nil, an upstream whose rules are the same objects keeps
// its connection (they are compared by identity: a compiled rule's
// internals never compare equal deeply); another rule reconnects it, and
// is served.
func TestPolicyReloadSame(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"), says("two", "a two"))
	onlyOne := &ptrRule{func(t *access.Tool) bool { return t.Name == "one" }}
	up := a.up("a", "")
	up.Allow = onlyOne
	up.Overrides = map[string]upstream.Override{"two": {Allow: onlyOne}}
	var log mcptest.SyncBuffer
	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{up}, Server: wymcp.Options{Logger: logTo(&log)}})
	ep := endpoint(url, "", info.Name)
	waitTools(t, ep, "one")
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{up}}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, &log, `reconnected="" removed=""`)
	up.Allow = &ptrRule{func(t *access.Tool) bool { return t.Name == "two" }}
	up.Overrides = nil
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{up}}); err != nil {
		t.Fatal(err)
	}
	waitLog(t, &log, `reconnected=a`)
	waitTools(t, ep, "two")
}
