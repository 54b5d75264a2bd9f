package actors

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// TestRoundMadeOnDemand: a tools/call whose tool never asks makes no Round
// (the plain call pays nothing for multi-round-trip calls); one that asks
// gets one, with the request's clientCapabilities; a retry's is set up
// before the tool runs.
func TestRoundMadeOnDemand(t *testing.T) {
	t.Parallel()
	plain := toolrun.Must(toolrun.NewRaw("plain", "d", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ok"), nil
		}))
	form := protocol.ElicitRequest{Message: "m", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
	asking := toolrun.Must(toolrun.NewRaw("asking", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var r protocol.ElicitResult
			return nil, toolrun.Ask(ctx, toolrun.Elicit("k", form, &r))
		}))
	s := newTestSystem(t, plain, asking)
	caps := wire.RawJSON(`{"elicitation":{}}`)
	call := func(tool *toolrun.Tool, responses wire.RawJSON) (*Call, Reply) {
		req := &wire.Request{ID: wire.NewIntID(1), Method: wire.MethodToolsCall, InputResponses: responses,
			Meta: wire.RequestMeta{ClientCapabilities: caps}}
		c := &Call{Ctx: context.Background(), Request: req, Tool: tool}
		rep, err := s.Ask(c)
		if err != nil {
			t.Fatal(err)
		}
		return c, rep
	}
	if c, rep := call(plain, nil); c.tctx.round.Load() != nil || rep.InputRequired {
		t.Errorf("a tool that never asks made a Round")
	}
	c, rep := call(asking, nil)
	if r := c.tctx.round.Load(); r == nil || string(r.Capabilities) != string(caps) || !rep.InputRequired {
		t.Errorf("an asking tool: round %+v, input required %v", r, rep.InputRequired)
	}
	c, _ = call(plain, wire.RawJSON(`{"k":{}}`))
	if r := c.tctx.round.Load(); r == nil || string(r.Responses) != `{"k":{}}` {
		t.Errorf("a retry's Round: %+v", r)
	}
}

// TestRoundLookupFree: asking the tool context whether a Round was made —
// what toolrun.Call does after every handler — allocates nothing. (Not
// parallel: AllocsPerRun counts the whole process.)
func TestRoundLookupFree(t *testing.T) {
	ctx := new(toolContext) // in a Call, which the request allocates anyway
	ctx.init(context.Background(), time.Minute)
	if n := testing.AllocsPerRun(100, func() {
		if ctx.Value(toolrun.RoundMadeKey{}) != (*toolrun.Round)(nil) {
			t.Fatal("a Round was made")
		}
	}); n != 0 {
		t.Errorf("looking for a Round allocates %v times", n)
	}
}
