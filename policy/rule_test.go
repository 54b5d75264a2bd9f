package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/policy"
)

func alice() *access.Caller {
	return &access.Caller{
		Subject: "alice", ClientID: "cli", Scopes: []string{"tools:read"},
		Claims: map[string]any{"sub": "alice", "groups": []any{"oncall", "dev"}, "tenant": "acme", "level": float64(3)},
	}
}

func bob() *access.Caller {
	return &access.Caller{Subject: "bob", Claims: map[string]any{"sub": "bob", "groups": []any{"contractors"}}}
}

func tool(name string, ann map[string]any) *access.Tool {
	if ann == nil {
		ann = map[string]any{}
	}
	return &access.Tool{Name: name, Upstream: "ops", Annotations: ann}
}

func mustCompile(t *testing.T, expr string) *policy.Rule {
	t.Helper()
	r, err := policy.Compile(expr)
	if err != nil {
		t.Fatalf("Compile(%q): %v", expr, err)
	}
	return r
}

func TestRuleDecides(t *testing.T) {
	t.Parallel()
	ro := map[string]any{"readOnlyHint": true}
	for _, c := range []struct {
		name, expr string
		req        access.Request
		want       bool
	}{
		{"group member", `"oncall" in caller.claims.groups`, access.Request{Caller: alice(), Tool: tool("ops_restart", nil)}, true},
		{"not a member", `"oncall" in caller.claims.groups`, access.Request{Caller: bob(), Tool: tool("ops_restart", nil)}, false},
		{"one tool guarded, another", `tool.name != "ops_restart" || "oncall" in caller.claims.groups`, access.Request{Caller: bob(), Tool: tool("search", nil)}, true},
		{"sub and client", `caller.sub == "alice" && caller.client_id == "cli"`, access.Request{Caller: alice(), Tool: tool("x", nil)}, true},
		{"scopes list", `"tools:read" in caller.scopes`, access.Request{Caller: alice(), Tool: tool("x", nil)}, true},
		{"number claim", `caller.claims.level >= 3`, access.Request{Caller: alice(), Tool: tool("x", nil)}, true},
		{"upstream", `tool.upstream == "ops"`, access.Request{Caller: alice(), Tool: tool("x", nil)}, true},
		{"contractor read-only", `!("contractors" in caller.claims.groups) || tool.annotations.?readOnlyHint.orValue(false)`, access.Request{Caller: bob(), Tool: tool("x", ro)}, true},
		{"contractor not read-only", `!("contractors" in caller.claims.groups) || tool.annotations.?readOnlyHint.orValue(false)`, access.Request{Caller: bob(), Tool: tool("x", nil)}, false},
		{"no auth: no caller", `caller.sub == "" && !caller.authenticated && size(caller.claims) == 0 && size(caller.scopes) == 0`, access.Request{Tool: tool("x", nil)}, true},
		{"args at the call", `args.env != "prod"`, access.Request{Caller: alice(), Tool: tool("x", nil), Args: json.RawMessage(`{"env":"prod"}`)}, false},
		{"args at the call, allowed", `args.env != "prod"`, access.Request{Caller: alice(), Tool: tool("x", nil), Args: json.RawMessage(`{"env":"dev"}`)}, true},
		{"args deferred at the list", `args.env != "prod"`, access.Request{Caller: alice(), Tool: tool("x", nil), Listing: true}, true},
		{"args deferred, the rest decides", `"oncall" in caller.claims.groups && args.env != "prod"`, access.Request{Caller: bob(), Tool: tool("x", nil), Listing: true}, false},
		{"args deferred, the rest allows", `"oncall" in caller.claims.groups && args.env != "prod"`, access.Request{Caller: alice(), Tool: tool("x", nil), Listing: true}, true},
		{"args absent at the call", `!has(args.env)`, access.Request{Caller: alice(), Tool: tool("x", nil)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustCompile(t, c.expr).Allow(context.Background(), &c.req)
			if err != nil || got != c.want {
				t.Fatalf("Allow = %v, %v; want %v, nil", got, err, c.want)
			}
		})
	}
}

// A rule that cannot be evaluated denies, with the error the server logs.
func TestRuleFailingDenies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, expr string
		req        access.Request
		want       string
	}{
		{"missing claim", `caller.claims.department == "ops"`, access.Request{Caller: alice(), Tool: tool("x", nil)}, "no such key"},
		{"no groups without auth", `"oncall" in caller.claims.groups`, access.Request{Tool: tool("x", nil)}, "no such key"},
		{"dyn not bool", `caller.claims.tenant`, access.Request{Caller: alice(), Tool: tool("x", nil)}, "not a bool"},
		{"args not an object", `args.x == 1`, access.Request{Tool: tool("x", nil), Args: json.RawMessage(`[1]`)}, "not a JSON object"},
		{"cost past the limit in one step", `args.text.contains("x")`, access.Request{Tool: tool("x", nil), Args: json.RawMessage(`{"text":"` + strings.Repeat("a", 20*policy.CostLimit) + `"}`)}, "cost limit"},
		{"cost past the limit over the claims", `caller.claims.groups.exists(g, g.startsWith("x"))`, access.Request{Caller: many(), Tool: tool("x", nil)}, "policy:"},
		{"cost past the limit", `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))`, access.Request{Tool: tool("x", nil)}, "policy:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustCompile(t, c.expr).Allow(context.Background(), &c.req)
			if got || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Allow = %v, %v; want false and an error with %q", got, err, c.want)
			}
		})
	}
}

// Compile refuses, on one line, what could never be evaluated.
func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ expr, want string }{
		{``, "empty expression"},
		{`caller.subject == "x"`, "undeclared reference"},
		{`tool.name`, "not bool"},
		{`1 +`, "column"},
		{`caller.sub == 1`, "no matching overload"},
		{strings.Repeat("a", policy.MaxExpressionSize+1), "size"},
	} {
		_, err := policy.Compile(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Compile(%.40q) = %v; want one line with %q", c.expr, err, c.want)
		}
	}
}

func TestRuleString(t *testing.T) {
	t.Parallel()
	if got := mustCompile(t, `caller.sub == "a"`).String(); got != `caller.sub == "a"` {
		t.Fatalf("String = %q", got)
	}
}

// many is a caller with more groups than CostLimit lets a rule walk.
func many() *access.Caller {
	groups := make([]any, policy.CostLimit)
	for i := range groups {
		groups[i] = "g"
	}
	return &access.Caller{Subject: "m", Claims: map[string]any{"groups": groups}}
}
