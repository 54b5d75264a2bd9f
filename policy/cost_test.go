package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/access"
)

// balanced is leaf joined by op n times, as a balanced tree: the deepest
// nesting a rule of MaxExpressionSize may hold within the parser's
// recursion limit.
func balanced(leaf, op string, n int) string {
	if n == 1 {
		return leaf
	}
	return "(" + balanced(leaf, op, n/2) + op + balanced(leaf, op, n-n/2) + ")"
}

// TestRuleDynamicCost: an operation on the arguments (dyn: the checker
// cannot choose its overload) is costed by its operands as it runs, as
// the same operation on a string or a list is: a rule that concatenates,
// compares or searches large arguments over and over stops at CostLimit
// and denies. cel-go costed each such operation 1, and these rules
// allowed, the first after seconds and hundreds of megabytes (found
// seeding FuzzPolicyRule with hostile rules).
func TestRuleDynamicCost(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a", 64<<10)
	list := `[` + strings.Repeat(`"a",`, 50_000) + `"a"]`
	for _, c := range []struct{ name, expr, args string }{
		{"concatenation", "size(" + balanced("args.s", "+", 64) + ") > 0", `{"s":"` + text + `"}`},
		{"comparison", balanced("(args.s <= args.t)", " && ", 20), `{"s":"` + text + `","t":"` + text + `"}`},
		{"list search", `!("x" in args.l) && !("y" in args.l) && !("z" in args.l)`, `{"l":` + list + `}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := mustCompile(t, c.expr)
			got, err := r.Allow(context.Background(), &access.Request{Tool: tool("x", nil), Args: json.RawMessage(c.args)})
			if got || err == nil || !strings.Contains(err.Error(), "cost limit exceeded") {
				t.Fatalf("Allow = %v, %v; want false and the cost limit", got, err)
			}
			// The same rule over small arguments decides as before.
			small := strings.NewReplacer(text, "a", list, `["a"]`).Replace(c.args)
			if got, err := r.Allow(context.Background(), &access.Request{Tool: tool("x", nil), Args: json.RawMessage(small)}); !got || err != nil {
				t.Fatalf("small arguments: Allow = %v, %v; want true", got, err)
			}
		})
	}
}

// TestRuleDynamicCostKeepsCheap: what the dynamic costing leaves alone
// (numbers added, a map's lookup, list concatenation, which cel-go does
// without copying) still runs within the limit.
func TestRuleDynamicCostKeepsCheap(t *testing.T) {
	t.Parallel()
	list := `[` + strings.Repeat(`1,`, 50_000) + `1]`
	for _, expr := range []string{
		balanced("args.n", "+", 200) + " == 200",
		balanced(`("k" in args.m)`, " && ", 100),
		"size(" + balanced("args.l", "+", 64) + ") == 64 * 50001",
	} {
		got, err := mustCompile(t, expr).Allow(context.Background(), &access.Request{Tool: tool("x", nil),
			Args: json.RawMessage(`{"n":1,"m":{"k":1},"l":` + list + `}`)})
		if !got || err != nil {
			t.Errorf("%.60s…: Allow = %v, %v; want true", expr, got, err)
		}
	}
}

// TestRuleDeepEqualityCost: an equality of two lists or maps is costed
// one per element, at every depth: cel-go costed it by the operands'
// length at a byte's rate, 1 for a list holding one large list, so a
// rule comparing large arguments a hundred times ran for seconds within
// CostLimit and allowed.
func TestRuleDeepEqualityCost(t *testing.T) {
	t.Parallel()
	nested := `[[` + strings.Repeat(`1,`, 20_000) + `1]]`
	r := mustCompile(t, balanced("(args.a == args.b)", " && ", 100))
	got, err := r.Allow(context.Background(), &access.Request{Tool: tool("x", nil), Args: json.RawMessage(`{"a":` + nested + `,"b":` + nested + `}`)})
	if got || err == nil || !strings.Contains(err.Error(), "cost limit exceeded") {
		t.Fatalf("Allow = %v, %v; want false and the cost limit", got, err)
	}
	if got, err := r.Allow(context.Background(), &access.Request{Tool: tool("x", nil), Args: json.RawMessage(`{"a":[[1,{"k":[2]}]],"b":[[1,{"k":[2]}]]}`)}); !got || err != nil {
		t.Fatalf("small arguments: Allow = %v, %v; want true", got, err)
	}
}
