package toolrun

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// OutcomeKind classifies one call for telemetry (docs/design.md §7).
// OutcomeOK is answered with the handler's result; OutcomeInputRequired
// with an input_required result; OutcomeBadInputResponse with a JSON-RPC
// error; every other kind with an isError result (docs/design.md §5).
type OutcomeKind uint8

const (
	// OutcomeOK: the handler returned a result that is not an error.
	OutcomeOK OutcomeKind = iota
	// OutcomeToolError: the handler returned an error or an isError result,
	// or a result it could not stand behind (unencodable; not matching the
	// output schema); also a call whose client went away.
	OutcomeToolError
	// OutcomeInvalidArguments: the arguments failed the input schema, or a
	// typed tool could not decode them; the handler did not run.
	OutcomeInvalidArguments
	// OutcomePanic: the handler panicked; [Outcome.Fault] holds the panic.
	OutcomePanic
	// OutcomeDeadline: the tool's deadline passed before the handler returned.
	OutcomeDeadline
	// OutcomeInputRequired: the handler returned [ErrInputRequired] from
	// [Ask]: the call waits for the client's input ([Outcome.Inputs]) and
	// carries [Outcome.Carry] to its next round. Not an error: the call is
	// going on.
	OutcomeInputRequired
	// OutcomeBadInputResponse: an answer in params.inputResponses is not a
	// valid result of the request it answers; the request is malformed
	// (-32602), and [Outcome.BadInput] says which answer.
	OutcomeBadInputResponse
	// OutcomeRefused: a forwarded tool's upstream refused the request with
	// a JSON-RPC error the client can act on ([Outcome.Refusal]), which is
	// the answer (docs/design.md §10a).
	OutcomeRefused
)

// String returns a short lower-case name for spans and metrics.
func (k OutcomeKind) String() string {
	switch k {
	case OutcomeOK:
		return "ok"
	case OutcomeToolError:
		return "tool_error"
	case OutcomeInvalidArguments:
		return "invalid_arguments"
	case OutcomePanic:
		return "panic"
	case OutcomeDeadline:
		return "deadline"
	case OutcomeInputRequired:
		return "input_required"
	case OutcomeBadInputResponse:
		return "bad_input_response"
	case OutcomeRefused:
		return "refused"
	}
	return fmt.Sprintf("OutcomeKind(%d)", uint8(k))
}

// Outcome is what one call came to: the result to send and how to record it.
type Outcome struct {
	// Result is the tools/call result; nil for OutcomeInputRequired,
	// OutcomeBadInputResponse and OutcomeRefused, and when Raw is set,
	// never nil otherwise.
	Result *protocol.CallToolResult
	// Raw is a forwarded tool's result: the upstream's result object as it
	// sent it, which the server splices into its answer unchanged.
	Raw wire.RawJSON
	// Refusal is the JSON-RPC error of an OutcomeRefused call.
	Refusal *wire.Error

	// Kind classifies the call.
	Kind OutcomeKind
	// Fault is the contained panic, for the span and the log; non-nil iff
	// Kind is OutcomePanic. It never goes to the client.
	Fault *Fault
	// Inputs are the inputs an OutcomeInputRequired call waits for, in the
	// order the handler asked for them.
	Inputs []InputRequest
	// Carry is what an OutcomeInputRequired call's next round must find:
	// the server seals it into the requestState.
	Carry Carried
	// BadInput describes the answer of an OutcomeBadInputResponse, for the
	// client: which key, what it should have been; BadMethod is the method
	// of the request the answer answers.
	BadInput, BadMethod string
}

// Fault is a contained panic: the value and the full stack, taken by
// debug.Stack inside the recover so that it shows the panicking frame. The
// stack is not truncated: it goes to a span or a log, never on the wire.
type Fault struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine's stack at the recover.
	Stack []byte
}

// Error returns "panic: <value>".
func (f *Fault) Error() string { return fmt.Sprint("panic: ", f.Value) }

// Unwrap returns the panic value when it is an error, so errors.Is and
// errors.As see through a contained panic.
func (f *Fault) Unwrap() error {
	err, _ := f.Value.(error)
	return err
}

// panicText is the whole answer to a panic. It is fixed (docs/design.md §5:
// no panic text or stack reaches a client); the detail is in the Fault.
const panicText = "Tool execution failed: internal error"

// Call runs one call of the tool (docs/design.md §5, the rows "arguments
// fail the tool's input schema" and "tool returns an error; tool panics;
// tool deadline"). It never panics, and it returns only when the handler
// has returned: a handler that ignores its context holds the call until
// it is done, since Go cannot stop a goroutine from outside.
//
// args is params.arguments as sent: nil (absent) means {}. The caller has
// already refused a non-object with -32602.
//
// The handler runs under ctx, which the caller bounds by [Tool.Deadline]:
// the server does, and also answers for a handler that outlives it (see
// [Tool.DeadlineOutcome]), so the deadline has one owner and Call sets no
// timer of its own (a caller outside a server bounds ctx itself, with
// context.WithTimeout(ctx, t.Deadline())). If ctx ends with its deadline,
// the outcome is [OutcomeDeadline]; if it ends otherwise (the client went
// away), the result says "request cancelled" and nobody will read it.
//
// A call may be one round of a multi-round-trip call (SEP-2322): ctx then
// carries the call's [Round] (the server's tool context answers [RoundKey]).
// A handler that returns [ErrInputRequired] from [Ask] makes the
// outcome [OutcomeInputRequired]; an answer that does not decode makes it
// [OutcomeBadInputResponse]. Both come after the deadline and cancellation.
//
// A panic is contained on the calling goroutine; runtime.Goexit (t.FailNow
// in a test) is not a panic and still ends that goroutine.
func (t *Tool) Call(ctx context.Context, args wire.RawJSON) Outcome {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(args) == 0 {
		args = wire.RawJSON("{}")
	}
	if t.forward != nil {
		return t.callForward(ctx, args)
	}
	// The arguments are decoded here for the validator and, for typed tools,
	// once more into In (validate first, then decode: the handler only
	// ever sees arguments the schema admits).
	// The fast path vouches for most valid arguments without the decode;
	// when it is not sure, the full path gives the answer and the message.
	if t.fastInput == nil || !t.fastInput.accept(args) {
		var instance any
		if err := strictjson.Unmarshal(args, &instance); err != nil {
			return t.invalid("arguments are not valid JSON")
		}
		if msg := validate(t.input, instance); msg != "" {
			return t.invalid(msg)
		}
	}

	res, fault, invalid, asked, err := t.guarded(ctx, args)

	if fault != nil {
		return Outcome{Result: protocol.ErrorResult(panicText), Kind: OutcomePanic, Fault: fault}
	}
	// Err is asked once: a server's tool context answers it from the clock.
	if out, ended := t.ended(ctx); ended {
		return out
	}
	// Only a Round that exists has anything to say: a handler that never
	// asked made none, and looking must not make one.
	if round := madeRound(ctx); round != nil {
		if out, ok := round.outcome(asked); ok {
			return out
		}
	}
	switch {
	case invalid:
		return t.invalid(err.Error())
	case err != nil:
		return Outcome{Result: protocol.ErrorResult(err.Error()), Kind: OutcomeToolError}
	case res == nil:
		return Outcome{Result: &protocol.CallToolResult{Content: []protocol.Content{}}, Kind: OutcomeOK}
	}
	if res.Content == nil {
		// content is required on the wire; a copy keeps the handler's value as it was.
		c := *res
		c.Content = []protocol.Content{}
		res = &c
	}
	if res.IsError {
		return Outcome{Result: res, Kind: OutcomeToolError}
	}
	return Outcome{Result: res, Kind: OutcomeOK}
}

// DeadlineOutcome is the outcome of a call that the tool's deadline cut
// off: an isError result naming the tool and its deadline. It is the one
// timeout answer, whether the handler returned late on its own or the
// server answered for a handler that ignored its context.
func (t *Tool) DeadlineOutcome() Outcome {
	return Outcome{
		Result: protocol.ErrorResult(fmt.Sprintf("Tool %s timed out after %s", t.def.Name, t.deadline.Round(time.Millisecond))),
		Kind:   OutcomeDeadline,
	}
}

// invalid answers arguments that fail the schema: an isError result the
// model can act on, naming each failure.
func (t *Tool) invalid(msg string) Outcome {
	return Outcome{
		Result: protocol.ErrorResult("Invalid arguments for tool " + t.def.Name + ": " + msg),
		Kind:   OutcomeInvalidArguments,
	}
}

// guarded runs the handler — and, for typed tools, the encoding of Out,
// which runs user MarshalJSON methods — with any panic turned into a Fault.
// asked reports that the handler returned ErrInputRequired.
func (t *Tool) guarded(ctx context.Context, args wire.RawJSON) (res *protocol.CallToolResult, fault *Fault, invalid, asked bool, err error) {
	defer func() {
		// Since Go 1.21 panic(nil) recovers a *runtime.PanicNilError, so a
		// nil here means no panic.
		if v := recover(); v != nil {
			res, invalid, asked, err = nil, false, false, nil
			fault = &Fault{Value: v, Stack: debug.Stack()}
		}
	}()
	res, invalid, err = t.run(ctx, args)
	if err != nil {
		// Call errors.Is and err.Error() here, under the recover: a typed
		// nil error or a faulty Is or Error method panics, and Call must not.
		asked = errors.Is(err, ErrInputRequired)
		err = textError(err.Error())
	}
	return res, nil, invalid, asked, err
}

// outcome is the call's outcome when its round decides it: a malformed
// answer refuses the request whatever the handler made of it; a handler
// that returned ErrInputRequired with inputs pending waits for them. A
// handler that asked and then returned a result (or another error) has
// chosen to do without the inputs: ok is false, and its result stands.
func (r *Round) outcome(asked bool) (Outcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bad != nil {
		return Outcome{Kind: OutcomeBadInputResponse, BadInput: fmt.Sprintf("inputResponses[%q] is not a valid %s result", r.bad.key, r.bad.method), BadMethod: r.bad.method}, true
	}
	if asked && len(r.pending) > 0 {
		return Outcome{Kind: OutcomeInputRequired, Inputs: slices.Clone(r.pending), Carry: r.carry()}, true
	}
	return Outcome{}, false
}

// textError is an error reduced to its text, taken inside guarded.
type textError string

func (e textError) Error() string { return string(e) }
