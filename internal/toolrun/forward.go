package toolrun

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// A forwarded tool is a tool another MCP server runs (package upstream,
// docs/design.md §10). Its call is not a Go function's: the arguments go to
// the upstream as the client sent them, and the upstream's result comes
// back as its bytes, which the server splices into its own answer
// (wire.AppendForwardedResult) without decoding or encoding them again.
// The gateway validates nothing the upstream validates itself: the input
// schema is the upstream's, kept as it sent it, and the upstream applies
// it.

// Forward runs one call of a forwarded tool: it sends call to the upstream
// and returns what came back. It must honour ctx (the call's deadline, the
// client going away, a drain): the server answers for it when ctx ends.
type Forward func(ctx context.Context, call Forwarding) Forwarded

// Forwarding is what one call of a forwarded tool sends upstream.
type Forwarding struct {
	// Arguments is params.arguments as the client sent it; "{}" when absent.
	// It is the request's buffer, valid until Forward returns.
	Arguments wire.RawJSON
	// Responses is the retry's params.inputResponses as sent, nil on a
	// first round.
	Responses wire.RawJSON
	// State is the upstream's requestState of the previous round, exactly
	// as the upstream gave it; "" on a first round.
	State string
	// Capabilities is the client's clientCapabilities object (nil when it
	// declared none): the upstream asks for input only of what the client
	// can give.
	Capabilities wire.RawJSON
}

// Forwarded is the upstream's answer to one forwarded call: exactly one of
// Result, Inputs, Refusal and Failure is set.
type Forwarded struct {
	// Result is the upstream's tools/call result object as it sent it, and
	// IsError its isError member.
	Result  wire.RawJSON
	IsError bool
	// Inputs and State are an upstream input_required result: the inputs
	// it asks the client for and its requestState, which travels sealed in
	// the server's own to the next round (docs/design.md §10).
	Inputs []InputRequest
	State  string
	// Refusal is an upstream JSON-RPC error that the client's request
	// caused and the client can act on, answered as that error.
	Refusal *wire.Error
	// Failure is any other outcome, as the text of an isError result (the
	// model reads it).
	Failure string
}

// upstreamStateKey is the key of Carried.Memory under which a forwarded
// call carries its upstream's requestState from round to round: tools
// built with New or NewRaw cannot reach it (a forwarded tool has no
// handler of theirs), so it collides with nothing.
const upstreamStateKey = "\x00upstream.requestState"

// NewForward returns the forwarded tool def, which fwd runs. def is the
// upstream's tool under its served name; its schemas are kept as given and
// not compiled (the upstream applies them), but its x-mcp-header
// declarations are read, so that the server checks a client's mirror
// headers for it as for any tool, and a tool whose declarations are
// invalid fails here. deadline bounds one call (0: DefaultDeadline).
func NewForward(def wire.Tool, deadline time.Duration, scopes []string, fwd Forward) (*Tool, error) {
	if err := checkName(def.Name); err != nil {
		return nil, err
	}
	if fwd == nil {
		return nil, fmt.Errorf("tools: tool %q: nil forward", def.Name)
	}
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	t := &Tool{def: def, deadline: deadline, forward: fwd}
	var err error
	if t.scopes, err = addScopes(nil, scopes); err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", def.Name, err)
	}
	if t.headers, err = parseHeaderParams(def.InputSchema); err != nil {
		return nil, fmt.Errorf("tools: tool %q: input schema: %w", def.Name, err)
	}
	if _, err := wire.AppendTool(nil, &t.def); err != nil {
		return nil, fmt.Errorf("tools: tool %q: definition does not encode: %w", def.Name, err)
	}
	return t, nil
}

// Forwards reports whether t is an upstream's tool: its calls go to
// another server, which shares what it can among the callers it tells
// apart.
func (t *Tool) Forwards() bool { return t.forward != nil }

// callForward is Call for a forwarded tool.
func (t *Tool) callForward(ctx context.Context, args wire.RawJSON) Outcome {
	f := Forwarding{Arguments: args}
	// A retry's Round exists already; a first round needs none, only the
	// request's capabilities.
	if r := madeRound(ctx); r != nil {
		f.Responses, f.Capabilities = r.Responses, r.Capabilities
		if s, ok := r.Carried.Memory[upstreamStateKey]; ok {
			f.State, _ = strictjson.Unquote(s)
		}
	} else if req, _ := ctx.Value(RequestKey{}).(*wire.Request); req != nil {
		f.Capabilities = req.Meta.ClientCapabilities
	}
	res, fault := t.guardedForward(ctx, f)
	if fault != nil {
		return Outcome{Result: protocol.ErrorResult(panicText), Kind: OutcomePanic, Fault: fault}
	}
	if out, ended := t.ended(ctx); ended {
		return out
	}
	switch {
	case res.Inputs != nil:
		state, err := strictjson.Marshal(res.State)
		if err != nil {
			return Outcome{Result: protocol.ErrorResult("The upstream's requestState cannot be carried"), Kind: OutcomeToolError}
		}
		return Outcome{Kind: OutcomeInputRequired, Inputs: res.Inputs, Carry: Carried{Memory: map[string]wire.RawJSON{upstreamStateKey: state}}}
	case res.Refusal != nil:
		return Outcome{Kind: OutcomeRefused, Refusal: res.Refusal}
	case res.Result != nil:
		kind := OutcomeOK
		if res.IsError {
			kind = OutcomeToolError
		}
		return Outcome{Raw: res.Result, Kind: kind}
	}
	return Outcome{Result: protocol.ErrorResult(res.Failure), Kind: OutcomeToolError}
}

// ended is the outcome of a call whose context ended before its answer
// could be used: the one timeout answer, or a cancellation nobody reads.
func (t *Tool) ended(ctx context.Context) (Outcome, bool) {
	cerr := ctx.Err()
	if cerr == nil {
		return Outcome{}, false
	}
	if errors.Is(cerr, context.DeadlineExceeded) {
		return t.DeadlineOutcome(), true
	}
	return Outcome{Result: protocol.ErrorResult("request cancelled"), Kind: OutcomeToolError}, true
}

// guardedForward runs fwd with a panic contained, as guarded runs a
// handler: a forwarder is the server's code, but one panic must not take
// down more than its call.
func (t *Tool) guardedForward(ctx context.Context, f Forwarding) (res Forwarded, fault *Fault) {
	defer func() {
		if v := recover(); v != nil {
			res, fault = Forwarded{}, &Fault{Value: v, Stack: debug.Stack()}
		}
	}()
	return t.forward(ctx, f), nil
}

// CapabilityOf returns the client capability an input request's method
// needs ("" for a method this revision does not know).
func CapabilityOf(method string) string {
	switch method {
	case wire.MethodElicit:
		return "elicitation"
	case wire.MethodSample:
		return "sampling"
	case wire.MethodListRoots:
		return "roots"
	}
	return ""
}

// WantsProgress reports whether the call's client asked for progress (its
// request carries a progressToken and accepts a stream): a forwarder asks
// its upstream for progress only then.
func WantsProgress(ctx context.Context) bool {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	return s != nil
}

// AskClient sends a request to the call's client and returns its answer:
// the result, or an error when the client answered with one, went away, or
// ctx ended. It exists only for a 2025-era client whose call's answer is a
// stream (docs/design.md §1a); [ClientAsker] returns it.
type AskClient func(ctx context.Context, method string, params wire.RawJSON) (wire.RawJSON, error)

// RequestKey asks a context for the call's *wire.Request; the server's
// tool context answers it.
type RequestKey struct{}

// AskClientKey asks a context for the call's [AskClient]; the server's
// tool context answers it.
type AskClientKey struct{}

// ClientAsker returns the call's AskClient, nil when its client cannot be
// asked during the call (a 2026-07-28 client, whose requests for input are
// input_required results, or a request that accepts no stream).
func ClientAsker(ctx context.Context) AskClient {
	a, _ := ctx.Value(AskClientKey{}).(AskClient)
	return a
}
