package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// TestPolicyKeys: allow and rateLimit on an entry of servers:, of
// upstreams: and of upstreams[].overrides reach the view, the upstream and
// the override (docs/design.md §11).
func TestPolicyKeys(t *testing.T) {
	t.Parallel()
	const file = `upstreams:
  - name: a
    url: http://127.0.0.1:1/mcp
    allow: 'tool.upstream == "a"'
    rateLimit: {calls: 60, per: 1m}
    overrides:
      restart:
        allow: '"oncall" in caller.claims.groups'
        rateLimit: {calls: 1, per: 10s}
servers:
  - path: /v
    allow: 'caller.sub != ""'
    rateLimit: {calls: 5, per: 1s}
`
	cfg, err := parseUpstreams("u.yaml", []byte(file), true)
	if err != nil {
		t.Fatal(err)
	}
	o := upstreamOptions(cfg)[0]
	ov := o.Overrides["restart"]
	v := gatewayViews(cfg)[0]
	for _, c := range []struct {
		rule access.Rule
		want string
	}{{o.Allow, `tool.upstream == "a"`}, {ov.Allow, `"oncall" in caller.claims.groups`}, {v.Allow, `caller.sub != ""`}} {
		if s, ok := c.rule.(interface{ String() string }); !ok || s.String() != c.want {
			t.Errorf("rule %v, want %s", c.rule, c.want)
		}
	}
	if o.RateLimit != (access.Limit{Calls: 60, Per: time.Minute}) || ov.RateLimit != (access.Limit{Calls: 1, Per: 10 * time.Second}) || v.RateLimit != (access.Limit{Calls: 5, Per: time.Second}) {
		t.Errorf("limits %v %v %v", o.RateLimit, ov.RateLimit, v.RateLimit)
	}
	// Without the keys, none.
	cfg, err = parseUpstreams("u.yaml", []byte("upstreams:\n  - {name: a, url: 'http://127.0.0.1:1/mcp', overrides: {x: {name: y}}}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if o := upstreamOptions(cfg)[0]; o.Allow != nil || o.Overrides["x"].Allow != nil || !o.RateLimit.IsZero() {
		t.Errorf("options without the keys: %+v", o)
	}
}

// TestPolicyKeyErrors: a bad rule or limit is one line naming the file,
// the line, the key and what is wrong.
func TestPolicyKeyErrors(t *testing.T) {
	t.Parallel()
	const head = "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n"
	for _, tc := range []struct{ file, want string }{
		{head + "    allow: 'caller.subject == \"x\"'\n", `-upstreams u.yaml:4: upstreams[0].allow: not a valid rule: column 1: undeclared reference to 'caller' (in container '') (the variables are caller.sub, caller.client_id, caller.scopes, caller.claims, caller.authenticated, tool.name, tool.upstream, tool.annotations, args)`},
		{head + "    allow: 'tool.name'\n", `-upstreams u.yaml:4: upstreams[0].allow: not a valid rule: the expression is of type string, not bool`},
		{head + "    allow: '1 +'\n", `-upstreams u.yaml:4: upstreams[0].allow: not a valid rule: column 4: Syntax error: mismatched input '<EOF>' expecting`},
		{head + "    allow: [a]\n", `-upstreams u.yaml:4: upstreams[0].allow: want a CEL expression, as a string`},
		{head + "    rateLimit: {calls: 0, per: 1m}\n", `-upstreams u.yaml:4: upstreams[0].rateLimit.calls: 0 must be at least 1`},
		{head + "    rateLimit: {per: 1m}\n", `-upstreams u.yaml:4: upstreams[0].rateLimit.calls: missing: write rateLimit: {calls: N, per: DURATION}`},
		{head + "    rateLimit: {calls: 5}\n", `-upstreams u.yaml:4: upstreams[0].rateLimit.per: missing or 0: write rateLimit: {calls: N, per: DURATION}, such as per: 1m`},
		{head + "    rateLimit: {calls: 5, per: 1m, burst: 3}\n", `-upstreams u.yaml:4: upstreams[0].rateLimit.burst: unknown key`},
		{head + "    rateLimit: {calls: 5, per: 60}\n", `-upstreams u.yaml:4: upstreams[0].rateLimit.per: want a duration such as 30s`},
		{head + "    overrides:\n      x:\n        allow: 'args.n >'\n", `-upstreams u.yaml:6: upstreams[0].overrides.x.allow: not a valid rule: column 9: Syntax error: mismatched input '<EOF>' expecting`},
		{head + "    overrides:\n      x:\n        rateLimit: {per: 1m}\n", `-upstreams u.yaml:6: upstreams[0].overrides.x.rateLimit.calls: missing: write rateLimit: {calls: N, per: DURATION}`},
		{head + "servers:\n  - path: /v\n    allow: 'caller.sub =='\n", `-upstreams u.yaml:6: servers[0].allow: not a valid rule: column 14: Syntax error: mismatched input '<EOF>' expecting`},
		{head + "servers:\n  - path: /v\n    rateLimit: {calls: 1}\n", `-upstreams u.yaml:6: servers[0].rateLimit.per: missing or 0: write rateLimit: {calls: N, per: DURATION}, such as per: 1m`},
	} {
		_, err := parseUpstreams("u.yaml", []byte(tc.file), false)
		// A syntax error's message goes on with what CEL's grammar
		// expected: its start is compared.
		if err == nil || err.Error() != tc.want && !(strings.HasSuffix(tc.want, "expecting") && strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}

// TestReloadBrokenRule: a SIGHUP whose file has a rule that does not
// compile is logged, one line naming it, and the rules served stay; a
// good one is applied.
func TestReloadBrokenRule(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("one", "a one"), says("two", "a two"))
	ups := func(allow string) string {
		return "upstreams:\n  - name: a\n    url: '" + a + "'\n    allow: '" + allow + "'\n"
	}
	file := upstreamsFile(t, "", ups(`tool.name == "one"`))
	cfg, err := loadUpstreams(file, false)
	if err != nil {
		t.Fatal(err)
	}
	var log mcptest.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	info := protocol.Implementation{Name: "gw", Version: "1.0.0"}
	g, err := gateway.New(t.Context(), gateway.Options{Info: info, Server: wymcp.Options{Logger: logger}, Upstreams: upstreamOptions(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		_ = g.Shutdown(context.Background())
	})
	ep := &mcptest.Endpoint{URL: hs.URL, HTTP: http.DefaultClient, Info: info}
	rl := newReloader(g, cfg, false, logger)
	if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
		t.Fatalf("tools %q, want [one]", got)
	}

	upstreamsFile(t, file, ups(`tool.name = "two"`))
	rl.reload(t.Context())
	want := `level=ERROR msg="upstreams not reloaded; serving as before" file=` + file + ` err="-upstreams ` + file + `:4: upstreams[0].allow: not a valid rule: column 11: Syntax error: token recognition error at: '= '; column 13: Syntax error: extraneous input '\"two\"' expecting <EOF>"`
	if !strings.Contains(log.String(), want) {
		t.Errorf("logged:\n%s\nwant %s", log.String(), want)
	}
	if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
		t.Errorf("tools %q after a refused reload, want [one]", got)
	}
	mcptest.ToolText(t, ep.Send(t, mcptest.ToolCall("one", `{}`)).ExpectResult(t, "1"))
	ep.Send(t, mcptest.ToolCall("two", `{}`)).ExpectError(t, 200, -32602, "1")

	upstreamsFile(t, file, ups(`tool.name == "two"`))
	rl.reload(t.Context())
	if got := toolNames(t, ep); strings.Join(got, " ") != "two" {
		t.Errorf("tools %q after a reload with a good rule, want [two]\n%s", got, log.String())
	}
}

// TestBadRuleAtStart: a rule that does not compile stops the start, exit
// status 2, with its one line.
func TestBadRuleAtStart(t *testing.T) {
	t.Parallel()
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    allow: 'caller.groups'\n")
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-upstreams", file}, &stdout, &stderr)
	want := "-upstreams " + file + ":4: upstreams[0].allow: not a valid rule: column 1: undeclared reference to 'caller' (in container '') (the variables are caller.sub, caller.client_id, caller.scopes, caller.claims, caller.authenticated, tool.name, tool.upstream, tool.annotations, args)\n"
	if code := exitCode(err, &stderr); code != 2 || !strings.HasSuffix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), want)
	}
}

// TestPolicyExample: deploy/policy.example.yaml reads as it says, and its
// rules decide as its comments say.
func TestPolicyExample(t *testing.T) {
	t.Parallel()
	const example = "../../deploy/policy.example.yaml"
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseUpstreams(example, data, true)
	if err != nil {
		t.Fatal(err)
	}
	ops, search := upstreamOptions(cfg)[0], upstreamOptions(cfg)[1]
	view := gatewayViews(cfg)[0]
	restart, deploy := ops.Overrides["restart"], ops.Overrides["deploy"]
	if restart.RateLimit != (access.Limit{Calls: 5, Per: time.Minute}) || search.RateLimit != (access.Limit{Calls: 60, Per: time.Minute}) ||
		view.RateLimit != (access.Limit{Calls: 600, Per: time.Minute}) || search.Allow != nil {
		t.Errorf("limits: %v %v %v", restart.RateLimit, search.RateLimit, view.RateLimit)
	}
	yes := map[string]any{"readOnlyHint": true}
	who := func(groups ...any) *access.Caller {
		return &access.Caller{Subject: "u", Claims: map[string]any{"sub": "u", "groups": groups}}
	}
	for _, c := range []struct {
		name string
		rule access.Rule
		req  access.Request
		want bool
	}{
		{"ops: anyone reads", ops.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_status", Annotations: yes}}, true},
		{"ops: on-call writes", ops.Allow, access.Request{Caller: who("oncall"), Tool: &access.Tool{Name: "ops_scale", Annotations: map[string]any{}}}, true},
		{"ops: others do not", ops.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_scale", Annotations: map[string]any{}}}, false},
		{"ops: a token without groups", ops.Allow, access.Request{Caller: &access.Caller{Subject: "u"}, Tool: &access.Tool{Name: "ops_scale", Annotations: map[string]any{}}}, false},
		{"restart: on-call only", restart.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_restart", Annotations: yes}}, false},
		{"deploy: listed", deploy.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_deploy"}, Listing: true}, true},
		{"deploy: staging", deploy.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_deploy"}, Args: []byte(`{"env":"staging"}`)}, true},
		{"deploy: prod", deploy.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "ops_deploy"}, Args: []byte(`{"env":"prod"}`)}, false},
		{"deploy: prod by a release manager", deploy.Allow, access.Request{Caller: who("release-managers"), Tool: &access.Tool{Name: "ops_deploy"}, Args: []byte(`{"env":"prod"}`)}, true},
		{"view: contractors read", view.Allow, access.Request{Caller: who("contractors"), Tool: &access.Tool{Name: "search_docs", Annotations: yes}}, true},
		{"view: contractors do not write", view.Allow, access.Request{Caller: who("contractors"), Tool: &access.Tool{Name: "ops_scale", Annotations: map[string]any{}}}, false},
	} {
		got, err := c.rule.Allow(t.Context(), &c.req)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
