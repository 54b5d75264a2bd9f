package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// TestPolicyEndToEnd runs the -upstreams file's rules and rate limits
// (docs/design.md §11) in the real program, in a child process, behind a
// real authorization server (interop/oauth) whose users' tokens carry a
// groups claim: who lists and calls what, per rule; a rate limit reached by
// one user while another goes on; a SIGHUP with a broken rule, which keeps
// the rules served. Skipped unless WYMCP_E2E_OAUTH=1.
func TestPolicyEndToEnd(t *testing.T) {
	if os.Getenv("WYMCP_E2E_OAUTH") != "1" {
		t.Skip("set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth)")
	}
	as, _ := startAuthServer(t)
	users := map[string]mcptest.User{}
	for _, u := range as.Users {
		users[u.ClientID] = u
	}
	yes := true
	ro := tools.WithAnnotations(protocol.ToolAnnotations{ReadOnlyHint: &yes})
	deploy := tools.Must(tools.NewRaw("deploy", "Deploys.", []byte(`{"type":"object","properties":{"env":{"type":"string"}}}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("deployed " + string(args)), nil
		}))
	_, origin := serveOrigin(t, nil,
		tools.Must(tools.New("status", "Says how it is.", func(context.Context, struct{}) (string, error) { return "up", nil }, ro)),
		tools.Must(tools.New("search", "Searches.", func(context.Context, struct{}) (string, error) { return "found", nil }, ro)),
		says("restart", "restarted"), deploy)
	rules := func(restart string) string {
		return fmt.Sprintf(`upstreams:
  - name: ops
    url: %q
    allow: '!("contractors" in caller.claims.?groups.orValue([])) || tool.annotations.?readOnlyHint.orValue(false)'
    overrides:
      restart:
        allow: '%s'
      deploy:
        allow: 'args.?env.orValue("") != "prod" || "oncall" in caller.claims.?groups.orValue([])'
      search:
        rateLimit: {calls: 2, per: 1h}
`, origin, restart)
	}
	file := upstreamsFile(t, "", rules(`"oncall" in caller.claims.?groups.orValue([])`))
	ch := startChild(t, "-tools", "none", "-upstreams", file, "-auth-issuer", as.Issuer, "-auth-jwks", as.JWKSURI)
	token := map[string]string{}
	for name, u := range users {
		token[name] = clientToken(t, as, u.ClientID, u.ClientSecret, ch.ep.URL, "tools:echo")
	}
	alice, bob, carol := token["wymcp-alice"], token["wymcp-bob"], token["wymcp-carol"]
	list := func(tok string) []string {
		t.Helper()
		res := ch.ep.Send(t, mcptest.Call("tools/list", "").With("Authorization", "Bearer "+tok)).ExpectResult(t, "1")
		if res["cacheScope"] != "private" {
			t.Errorf("cacheScope %v, want private", res["cacheScope"])
		}
		var names []string
		for _, tool := range res["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		slices.Sort(names)
		return names
	}
	call := func(tok, name, args string) mcptest.Reply {
		t.Helper()
		return ch.ep.Send(t, mcptest.ToolCall(name, args).With("Authorization", "Bearer "+tok))
	}
	ran := func(tok, name, args, want string) {
		t.Helper()
		if text, isErr := mcptest.ToolText(t, call(tok, name, args).ExpectResult(t, "1")); !strings.Contains(text, want) || isErr {
			t.Errorf("%s %s: %q isError %v, want %q", name, args, text, isErr, want)
		}
	}
	hidden := func(tok, name, args string) {
		t.Helper()
		rep := call(tok, name, args)
		if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ` + name + `"}}`; rep.Status != http.StatusOK || string(rep.Raw) != want {
			t.Errorf("%s %s: %d %s, want 200 %s", name, args, rep.Status, rep.Raw, want)
		}
	}

	// Lists, per rule.
	for _, c := range []struct {
		tok  string
		want []string
	}{
		{alice, []string{"deploy", "restart", "search", "status"}}, // on call
		{bob, []string{"deploy", "search", "status"}},              // restart: on call only; deploy: decided by its arguments
		{carol, []string{"search", "status"}},                      // a contractor: read-only tools
	} {
		if got := list(c.tok); !slices.Equal(got, c.want) {
			t.Errorf("tools/list %q, want %q", got, c.want)
		}
	}
	// Calls: allowed, denied (as unknown), decided by the arguments.
	ran(alice, "restart", `{}`, "restarted")
	hidden(bob, "restart", `{}`)
	hidden(carol, "restart", `{}`)
	ran(bob, "deploy", `{"env":"staging"}`, "staging")
	hidden(bob, "deploy", `{"env":"prod"}`)
	ran(alice, "deploy", `{"env":"prod"}`, "prod")
	hidden(carol, "deploy", `{"env":"staging"}`)
	ran(carol, "status", `{}`, "up")

	// search: 2 calls an hour per user. Bob spends his; Alice goes on.
	ran(bob, "search", `{}`, "found")
	ran(bob, "search", `{}`, "found")
	rep := call(bob, "search", `{}`)
	rep.ExpectError(t, http.StatusTooManyRequests, -32603, "1")
	if ms, _ := rep.Data(t)["retryAfterMs"].(float64); ms <= 0 || rep.Header.Get("Retry-After") == "" || rep.Msg.Error.Message != "Too many calls from this caller: retry later" {
		t.Errorf("past the limit: Retry-After %q, %s", rep.Header.Get("Retry-After"), rep.Raw)
	}
	ran(alice, "search", `{}`, "found")

	// A broken rule on SIGHUP: logged, one line naming it; the rules stay.
	upstreamsFile(t, file, rules(`"oncall" in caller.claims.groups &&`))
	if err := ch.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ch.waitLog(t, "upstreams not reloaded; serving as before")
	if !strings.Contains(ch.stderr.String(), `err="-upstreams `+file+`:7: upstreams[0].overrides.restart.allow: not a valid rule: column 36: Syntax error:`) {
		t.Errorf("the broken rule is not logged as expected:\n%s", ch.stderr)
	}
	ran(alice, "restart", `{}`, "restarted")
	hidden(bob, "restart", `{}`)
	if got := list(bob); !slices.Equal(got, []string{"deploy", "search", "status"}) {
		t.Errorf("after the broken reload, bob lists %q", got)
	}
	// A good one is applied: restart now for bob's group too.
	upstreamsFile(t, file, rules(`"dev" in caller.claims.?groups.orValue([])`))
	if err := ch.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ch.waitLog(t, `msg="upstreams reloaded"`)
	if got := list(bob); !slices.Equal(got, []string{"deploy", "restart", "search", "status"}) {
		t.Errorf("after the good reload, bob lists %q", got)
	}
	ran(bob, "restart", `{}`, "restarted")
	hidden(carol, "restart", `{}`)
}
