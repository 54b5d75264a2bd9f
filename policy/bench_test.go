package policy_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/policy"
)

// BenchmarkAllow is one evaluation of a simple claim check, the rule
// docs/design.md §11 measures.
func BenchmarkAllow(b *testing.B) {
	r, err := policy.Compile(`"oncall" in caller.claims.groups`)
	if err != nil {
		b.Fatal(err)
	}
	req := &access.Request{Caller: alice(), Tool: tool("x", nil)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := r.Allow(ctx, req); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
