package toolrun_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

func BenchmarkCallEcho(b *testing.B) {
	tool := toolrun.Must(toolrun.New("echo", "Echoes.", echo))
	args := wire.RawJSON(`{"text":"hello, world"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out := tool.Call(ctx, args); out.Kind != toolrun.OutcomeOK {
			b.Fatal(out.Kind)
		}
	}
}
