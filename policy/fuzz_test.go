package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/policy"
)

// fuzzRuleSeeds are the rules of this package's tests, of
// deploy/policy.example.yaml and of docs/design.md §11, and hostile ones:
// deep nesting, large comprehensions and strings, backtracking regexes.
var fuzzRuleSeeds = []string{
	`"oncall" in caller.claims.groups`,
	`tool.name != "ops_restart" || "oncall" in caller.claims.groups`,
	`caller.sub == "alice" && caller.client_id == "cli"`,
	`"tools:read" in caller.scopes`,
	`caller.claims.level >= 3`,
	`tool.upstream == "ops"`,
	`!("contractors" in caller.claims.groups) || tool.annotations.?readOnlyHint.orValue(false)`,
	`caller.sub == "" && !caller.authenticated && size(caller.claims) == 0 && size(caller.scopes) == 0`,
	`args.env != "prod"`,
	`"oncall" in caller.claims.groups && args.env != "prod"`,
	`!has(args.env)`,
	`caller.claims.department == "ops"`,
	`caller.claims.tenant`,
	`args.x == 1`,
	`args.text.contains("x")`,
	`caller.claims.groups.exists(g, g.startsWith("x"))`,
	`[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))`,
	`"oncall" in caller.claims.?groups.orValue([]) || tool.annotations.?readOnlyHint.orValue(false)`,
	`"oncall" in caller.claims.?groups.orValue([])`,
	`args.?env.orValue("") != "prod" || "release-managers" in caller.claims.?groups.orValue([])`,
	`!("contractors" in caller.claims.?groups.orValue([])) || tool.annotations.?readOnlyHint.orValue(false)`,
	`has(caller.claims.groups)`,
	// Hostile.
	strings.Repeat("(", 120) + "true" + strings.Repeat(")", 120),
	strings.Repeat("!", 200) + "true",
	strings.Repeat("[", 60) + "1" + strings.Repeat("]", 60) + " != []",
	strings.Repeat("true && ", 500) + "true",
	`caller.sub.matches('(a+)+$')`,
	`args.s.matches('^(a|aa)*$')`,
	`args.s.matches('(x+x+)+y')`,
	`caller.sub.matches('[')`,
	`caller.sub.matches(caller.client_id)`,
	`size(caller.sub + caller.sub + caller.sub + caller.sub + caller.sub + caller.sub + caller.sub + caller.sub) > 0`,
	`[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, string(a+b+c+d).size()))))[0][0][0][0] > 0`,
	`args.list.all(x, args.list.all(y, args.list.all(z, x == y || y == z)))`,
	`args.all(k, args[k] == args[k])`,
	`caller.claims.all(k, caller.claims.all(j, k != j || caller.claims[k] == caller.claims[j]))`,
	`args.a.b.c.d.e.f.g.h == 1`,
	`string(args) != ""`,
	`dyn(args.n) / 0 == 1`,
	`int(args.n) + 9223372036854775807 > 0`,
	`args.?x.?y.?z.orValue(1) == 1`,
	`optional.of(args).hasValue()`,
	`caller.claims.groups[9223372036854775807] == "x"`,
	`caller.scopes.exists_one(s, s == s + s)`,
	`tool.annotations.readOnlyHint`,
	`"\u0000\xff" in caller.scopes`,
	`b"\xff" == bytes(caller.sub)`,
	`duration(caller.sub) > duration("1s")`,
	`timestamp(caller.sub) < timestamp("2026-01-01T00:00:00Z")`,
	`type(args) == map`,
	`args == {"a": [1, {"b": null}]}`,
	`1 +`, `caller.subject == "x"`, `tool.name`, ``, ` `,
}

// fuzzHostileSeeds are rules whose operations on the arguments cel-go
// costed 1 each (TestRuleDynamicCost), with arguments they are slow on.
func fuzzHostileSeeds() map[string]string {
	text := `{"s":"` + strings.Repeat("a", 16<<10) + `","t":"` + strings.Repeat("a", 16<<10) + `","l":[` + strings.Repeat(`"a",`, 20_000) + `"a"]}`
	return map[string]string{
		"size(" + balanced("args.s", "+", 256) + ") > 0":          text,
		balanced("(args.s <= args.t)", " && ", 80):                text,
		balanced(`!("x" in args.l)`, " && ", 100):                 text,
		"size(" + balanced("caller.claims.s", "+", 128) + ") > 0": text,
		balanced("(args.a == args.b)", " && ", 100):               `{"a":[[` + strings.Repeat(`1,`, 5_000) + `1]],"b":[[` + strings.Repeat(`1,`, 5_000) + `1]]}`,
	}
}

// FuzzPolicyRule: Compile either refuses an expression with an error on
// one line or gives a rule; the rule, over any caller, tool and arguments,
// called or listed, never panics (Allow recovers cel-go's), returns (its
// cost is bounded: CostLimit, MaxEvalTime), and denies whenever it fails.
func FuzzPolicyRule(f *testing.F) {
	claims := `{"sub":"alice","groups":["oncall","dev"],"tenant":"acme","level":3}`
	for _, expr := range fuzzRuleSeeds {
		f.Add(expr, "alice", "cli", "tools:read tools:write", []byte(claims), "ops_restart", []byte(`{"env":"prod","s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!","list":[1,2,3,4,5,6,7,8,9,10],"n":1}`), true, false)
		f.Add(expr, "", "", "", []byte(nil), "x", []byte(nil), false, true)
	}
	for expr, args := range fuzzHostileSeeds() {
		f.Add(expr, "s", "c", "", []byte(args), "t", []byte(args), true, false)
	}
	f.Add(`args.a.a.a.a == 1`, "s", "c", "", []byte(`{"groups":[[[[[[[[[[]]]]]]]]]]}`), "t", []byte(`{"a":`+strings.Repeat(`{"a":`, 200)+`1`+strings.Repeat(`}`, 201)), true, false)
	f.Add(`args.a.size() > 0`, "s", "c", "", []byte(`{}`), "t", []byte(`{"a":[`+strings.Repeat(`[`, 300)+strings.Repeat(`]`, 300)+`]}`), true, false)
	f.Fuzz(func(t *testing.T, expr, sub, clientID, scopes string, claims []byte, toolName string, args []byte, authenticated, listing bool) {
		r, err := policy.Compile(expr)
		if err != nil {
			if r != nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Compile(%q) = %v, %v: an error is one line, without a rule", expr, r, err)
			}
			return
		}
		req := &access.Request{Tool: &access.Tool{Name: toolName, Upstream: "up", Annotations: map[string]any{"readOnlyHint": len(toolName)%2 == 0}}, Listing: listing}
		if !listing && len(args) > 0 {
			req.Args = json.RawMessage(args)
		}
		if authenticated {
			c := &access.Caller{Subject: sub, ClientID: clientID, Scopes: strings.Fields(scopes)}
			_ = strictjson.Unmarshal(claims, &c.Claims)
			req.Caller = c
		}
		type result struct {
			ok  bool
			err error
		}
		done := make(chan result, 1)
		go func() {
			ok, err := r.Allow(context.Background(), req)
			done <- result{ok, err}
		}()
		// Not a measure of its time (MaxEvalTime bounds that): a rule
		// still running a minute on is one that does not stop.
		hang := time.NewTimer(time.Minute)
		defer hang.Stop()
		select {
		case got := <-done:
			if got.err != nil && got.ok {
				t.Fatalf("%q failed (%v) and allowed", expr, got.err)
			}
		case <-hang.C:
			t.Fatalf("%q still runs after a minute", expr)
		}
	})
}
