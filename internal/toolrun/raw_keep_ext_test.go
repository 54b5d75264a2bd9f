package toolrun_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// TestRawArgumentsMayBeKept: a raw handler's arguments are its own; the
// bytes the server read them from may change after the call (the server
// reuses its body buffers), and what the handler kept does not.
func TestRawArgumentsMayBeKept(t *testing.T) {
	var kept wire.RawJSON
	tool := toolrun.Must(toolrun.NewRaw("keep", "Keeps its arguments.", []byte(`{"type":"object"}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			kept = args
			return protocol.TextResult("ok"), nil
		}))
	body := []byte(`{"text":"first"}`)
	if out := tool.Call(context.Background(), body); out.Kind != toolrun.OutcomeOK {
		t.Fatalf("outcome %v", out.Kind)
	}
	copy(body, `{"text":"XXXXX"}`) // the server reuses the buffer
	if string(kept) != `{"text":"first"}` {
		t.Errorf("the kept arguments changed with the server's buffer: %s", kept)
	}
}
