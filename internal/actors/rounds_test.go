package actors

import (
	"context"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/roundctx"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// TestRoundMadeOnDemand: a tools/call whose tool never asks makes no Round
// (the plain call pays nothing for multi-round-trip calls); one that asks
// gets one, with the request's clientCapabilities; a retry's is set up
// before the tool runs.
func TestRoundMadeOnDemand(t *testing.T) {
	t.Parallel()
	plain := tools.Must(tools.NewRaw("plain", "d", []byte(`{"type":"object"}`),
		func(context.Context, protocol.RawJSON) (*protocol.CallToolResult, error) {
			return protocol.TextResult("ok"), nil
		}))
	form := protocol.ElicitRequest{Message: "m", RequestedSchema: protocol.RawJSON(`{"type":"object","properties":{}}`)}
	asking := tools.Must(tools.NewRaw("asking", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ protocol.RawJSON) (*protocol.CallToolResult, error) {
			var r protocol.ElicitResult
			return nil, tools.Ask(ctx, tools.Elicit("k", form, &r))
		}))
	s := newTestSystem(t, plain, asking)
	caps := wire.RawJSON(`{"elicitation":{}}`)
	call := func(tool *tools.Tool, responses wire.RawJSON) (*Call, Reply) {
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
// what tools.Call does after every handler — allocates nothing. (Not
// parallel: AllocsPerRun counts the whole process.)
func TestRoundLookupFree(t *testing.T) {
	ctx := new(toolContext) // in a Call, which the request allocates anyway
	ctx.init(context.Background(), time.Minute)
	if n := testing.AllocsPerRun(100, func() {
		if ctx.Value(roundctx.Made{}) != (*tools.Round)(nil) {
			t.Fatal("a Round was made")
		}
	}); n != 0 {
		t.Errorf("looking for a Round allocates %v times", n)
	}
}
