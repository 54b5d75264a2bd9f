package tools_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

func BenchmarkCallEcho(b *testing.B) {
	tool := tools.Must(tools.New("echo", "Echoes.", echo))
	args := protocol.RawJSON(`{"text":"hello, world"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out := tool.Call(ctx, args); out.Kind != tools.OutcomeOK {
			b.Fatal(out.Kind)
		}
	}
}
