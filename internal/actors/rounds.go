package actors

import (
	"crypto/rand"
	"fmt"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/reqstate"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// The multi-round-trip side of tools/call (SEP-2322). A round is one
// tools/call: the tool runs from the top, with the answers of the earlier
// rounds (opened from the requestState) and of this one (inputResponses);
// if it asks for more, the answer is an input_required result whose new
// requestState carries everything the next round needs. The server keeps
// nothing: any replica holding the key ring serves any round.

var (
	errInputResponses = wire.Errorf(wire.CodeInvalidParams, "Invalid params: params.inputResponses must be an object")
	// errRequestState is the one answer to a requestState that does not
	// open, whatever the reason (not a string, tampered, another key,
	// another tool, other arguments, another principal, expired): a client
	// learns nothing of which check failed.
	errRequestState = wire.Errorf(wire.CodeInvalidParams, "Invalid params: requestState is invalid or has expired")
)

// openRound sets up the call's Round when the request is a retry, from its
// inputResponses and its opened requestState, which it returns (nil on a
// first call). A malformed inputResponses or a state that does not open is
// -32602. A first call gets its Round only if the tool asks (toolContext).
func (t *tables) openRound(c *Call) (*reqstate.State, *wire.Error) {
	req := c.Request
	if req.InputResponses == nil && req.RequestState == nil {
		return nil, nil
	}
	if req.InputResponses != nil && req.InputResponses[0] != '{' {
		return nil, errInputResponses
	}
	r := &toolrun.Round{Responses: req.InputResponses, Capabilities: req.Meta.ClientCapabilities}
	var prev *reqstate.State
	if req.RequestState != nil {
		token, ok := req.RequestStateString()
		if !ok {
			return nil, errRequestState
		}
		var err error
		if prev, err = t.states.Open(binding(c), token); err != nil {
			return nil, errRequestState
		}
		r.Carried = toolrun.Carried{Answers: prev.Answers, Memory: prev.Memory}
		if c.Op != nil {
			c.Op.SetCall(prev.CallID, prev.Round+1)
		}
	}
	c.tctx.setRound(r)
	return prev, nil
}

// inputRequired answers a call that waits for the client's input: an
// input_required result naming the inputs, with the next requestState. The
// spec forbids asking for input the client has not declared it can give
// (basic/patterns/mrtr: servers MUST NOT send such inputRequests): that is
// -32021 naming the capabilities needed, as the up-front check of a tool's
// required capabilities answers.
func (t *tables) inputRequired(c *Call, prev *reqstate.State, out toolrun.Outcome) Reply {
	need := make([]string, 0, 3)
	for _, in := range out.Inputs {
		need = append(need, in.Capability)
	}
	if perr := wire.CheckCapabilities(&c.Request.Meta, need); perr != nil {
		return Reply{Err: perr}
	}
	next := reqstate.State{Round: 1, Answers: out.Carry.Answers, Memory: out.Carry.Memory}
	if prev != nil {
		next.CallID, next.Round = prev.CallID, prev.Round+1
	} else {
		// The id names the call in telemetry across its rounds; it is
		// random, so that it says nothing of the call either.
		next.CallID = rand.Text()
		if c.Op != nil {
			c.Op.SetCall(next.CallID, next.Round)
		}
	}
	token, err := t.states.Seal(binding(c), &next)
	if err != nil {
		// A fault past the tool: the containment strategy answers -32603.
		panic(fmt.Errorf("sealing the requestState: %w", err))
	}
	reqs := make([]wire.InputRequest, len(out.Inputs))
	for i, in := range out.Inputs {
		reqs[i] = wire.InputRequest{Key: in.Key, Method: in.Method, Params: in.Params}
	}
	body, err := wire.AppendInputRequiredResult(make([]byte, 0, 256+len(token)), reqs, token, t.serverMeta)
	if err != nil {
		panic(fmt.Errorf("encoding the input_required result: %w", err))
	}
	return Reply{Result: body, InputRequired: true}
}

// binding is what a call's requestState is bound to: the tool, the
// arguments and the authenticated caller, user and client (the spec's
// replay defences: another principal, another request).
func binding(c *Call) reqstate.Binding {
	b := reqstate.Binding{Tool: c.Tool.Name(), Arguments: c.Request.Arguments}
	if id := caller.IdentityFrom(c.Ctx); id != nil {
		b.Subject, b.Client = id.Subject, id.Client
	}
	return b
}
