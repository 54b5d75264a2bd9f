package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// The multi-round-trip call of a 2025-era client (docs/design.md §1a). Its
// revision has no input_required result: the server asks the client itself,
// with a request of its own (elicitation/create, sampling/createMessage,
// roots/list) on the call's SSE stream, and the client POSTs its answer
// back. The rounds are then the server's to run: a tool that asks is
// answered input_required by toolrun as in 2026-07-28, and relay asks the
// client, waits for every answer, and runs the tool again from the top
// with them, exactly as a 2026-07-28 client's retry would. The tool sees
// one model in both eras.

// ClientRequester sends a request to the client of a call, on the call's
// stream, and waits for the client's answer: its result, or an error when
// the client answered with one, went away, or ctx ended first.
type ClientRequester interface {
	RequestClient(ctx context.Context, method string, params wire.RawJSON) (wire.RawJSON, error)
}

// maxRelayRounds bounds the rounds of one call: a tool that asks again
// every time it runs would otherwise hold its client until its deadline.
const maxRelayRounds = 32

// relay asks the client for the inputs out waits for, and returns the
// outcome of the tool run again with the answers. round counts the rounds
// run so far.
func (t *tables) relay(c *Call, out toolrun.Outcome, round int) toolrun.Outcome {
	client, ok := c.Late.(ClientRequester)
	if !c.AskClient || !ok {
		return relayFailure("the client cannot be asked for input: its request does not accept a text/event-stream answer")
	}
	if round > maxRelayRounds {
		return relayFailure(fmt.Sprintf("the tool asked the client for input more than %d times", maxRelayRounds))
	}
	responses := make([]byte, 0, 256)
	responses = append(responses, '{')
	for i, in := range out.Inputs {
		params := wire.LegacyInputParams(in.Method, in.Params, c.Request.Meta.ProtocolVersion)
		res, err := client.RequestClient(c.Ctx, in.Method, params)
		if err != nil {
			if errors.Is(c.Ctx.Err(), context.DeadlineExceeded) {
				// The tool's deadline passed while the client was asked:
				// the one timeout answer, without running the tool again.
				return c.Tool.DeadlineOutcome()
			}
			if errors.Is(err, ErrAskingFull) {
				return relayFailure(err.Error())
			}
			// The client answered with an error, or went away (then
			// nobody reads this).
			return relayFailure(fmt.Sprintf("the client did not answer %s: %v", in.Method, err))
		}
		if i > 0 {
			responses = append(responses, ',')
		}
		key, err := wire.Marshal(in.Key)
		if err != nil {
			return relayFailure("an input key cannot be encoded")
		}
		responses = append(append(append(responses, key...), ':'), res...)
	}
	responses = append(responses, '}')
	c.tctx.setRound(&toolrun.Round{
		Responses:    responses,
		Carried:      out.Carry,
		Capabilities: c.Request.Meta.ClientCapabilities,
	})
	return c.Tool.Call(c.Ctx, c.Request.Arguments)
}

// relayFailure is the outcome of a call whose client could not be asked
// what its tool needs: a tool error the model can read.
func relayFailure(why string) toolrun.Outcome {
	return toolrun.Outcome{Result: protocol.ErrorResult("The tool needed input from the client, and " + why + "."), Kind: toolrun.OutcomeToolError}
}

// The errors of RequestClient that relay words itself.
var (
	// ErrClientAnswer: the client's answer was a JSON-RPC error; the tool
	// cannot have what it asked for.
	ErrClientAnswer = errors.New("the client answered with an error")
	// ErrAskingFull: as many calls as the server lets wait for their
	// clients' answers are waiting.
	ErrAskingFull = errors.New("the server has too many calls waiting for their clients' answers; retry later")
)
