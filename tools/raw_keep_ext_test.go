package tools_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// TestRawArgumentsMayBeKept: a raw handler's arguments are its own; the
// bytes the server read them from may change after the call (the server
// reuses its body buffers), and what the handler kept does not.
func TestRawArgumentsMayBeKept(t *testing.T) {
	var kept protocol.RawJSON
	tool := tools.Must(tools.NewRaw("keep", "Keeps its arguments.", []byte(`{"type":"object"}`),
		func(_ context.Context, args protocol.RawJSON) (*protocol.CallToolResult, error) {
			kept = args
			return protocol.TextResult("ok"), nil
		}))
	body := []byte(`{"text":"first"}`)
	if out := tool.Call(context.Background(), body); out.Kind != tools.OutcomeOK {
		t.Fatalf("outcome %v", out.Kind)
	}
	copy(body, `{"text":"XXXXX"}`) // the server reuses the buffer
	if string(kept) != `{"text":"first"}` {
		t.Errorf("the kept arguments changed with the server's buffer: %s", kept)
	}
}
