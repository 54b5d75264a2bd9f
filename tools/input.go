package tools

import (
	"context"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// ErrInputRequired is what [Ask] returns while the client has not answered
// every input it names. A handler returns it as it is (or wrapped): the call
// is then answered with an input_required result that asks the client for
// every input still unanswered, and the client retries the call with its
// answers. Test for it with errors.Is.
var ErrInputRequired = toolrun.ErrInputRequired

// Input is one request for the client's input, made with [Elicit], [Sample]
// or [ListRoots] and asked with [Ask]. Its key names it in the
// input_required result and in the client's answer; keys are the handler's
// to choose and must be unique within the call.
type Input struct {
	in toolrun.Input
}

// Elicit is an input that asks the user to fill in a form
// (elicitation/create, form mode; needs the client's "elicitation"
// capability). Once answered, dst holds the answer: Action says whether the
// user accepted, and DecodeContent reads the form.
func Elicit(key string, req protocol.ElicitRequest, dst *protocol.ElicitResult) Input {
	return Input{toolrun.Elicit(key, req, dst)}
}

// Sample is an input that asks the client's model for a completion
// (sampling/createMessage; needs the client's "sampling" capability). Once
// answered, dst holds the sampled message; Text reads a text answer.
func Sample(key string, req protocol.CreateMessageRequest, dst *protocol.CreateMessageResult) Input {
	return Input{toolrun.Sample(key, req, dst)}
}

// ListRoots is an input that asks for the client's roots (roots/list;
// needs the client's "roots" capability). Once answered, dst holds them.
func ListRoots(key string, dst *protocol.ListRootsResult) Input {
	return Input{toolrun.ListRoots(key, dst)}
}

// Ask asks the client for inputs, within a call of a tool. It returns nil
// once the client has answered every one of them — each answer is then in
// the result its Input was made with — and otherwise [ErrInputRequired],
// which the handler returns: the call is answered with an input_required
// result naming the inputs not yet answered (all of them, however many Ask
// calls named them), and the client retries the call with its answers
// (multi-round-trip requests, SEP-2322).
//
//	var name protocol.ElicitResult
//	if err := tools.Ask(ctx, tools.Elicit("name", askName, &name)); err != nil {
//		return nil, err
//	}
//
// # The model: the handler runs again
//
// No goroutine waits for the client between rounds: the server keeps no
// state (any replica may serve the retry). Each retry runs the handler again
// from the top, with the answers of every round so far — those of earlier
// rounds travel sealed in the requestState, the latest in the retry — so
// that Ask returns nil where it asked before, and the handler goes on to
// its next Ask, or to its result. Hence:
//
//   - Side effects before an Ask run once per round: make them idempotent,
//     or move them after the last Ask.
//   - Values a later round needs that cannot be recomputed alike (a price
//     quoted, an id made) go through [Remember] and [Recall].
//   - Several inputs in one Ask are asked in one round; Asks one after the
//     other are rounds one after the other.
//   - An answer is given once: an answer sealed in an earlier round wins
//     over the same key sent again.
//   - Each round is one tools/call with its own deadline and progress
//     stream; the state's TTL (wymcp.Options.StateTTL) bounds the time
//     between rounds, and a state may be replayed within it: a side effect
//     that must happen once needs its own guard.
//
// An answer that is not a valid result of the request it answers (not an
// object, an unknown elicitation action) is a malformed request: the call
// is refused with -32602, whatever the handler returns. Asking for an input
// whose capability the request did not declare is refused with -32021
// (see [CanAsk]). Ask returns other errors for a programming error: an
// input without a key or a result pointer, params that cannot be encoded,
// a ctx that is not a call's.
func Ask(ctx context.Context, inputs ...Input) error {
	var buf [4]toolrun.Input
	ins := buf[:0]
	for _, in := range inputs {
		ins = append(ins, in.in)
	}
	return toolrun.Ask(ctx, ins...)
}

// CanAsk reports whether the request declared the client capability in
// needs, so that a handler can do without an input the client cannot give
// (asking for it anyway is refused with -32021, as the spec requires:
// servers MUST NOT send input requests the client has not declared).
func CanAsk(ctx context.Context, in Input) bool { return toolrun.CanAsk(ctx, in.in) }

// Remember keeps value, encoded as JSON now, for the call's later rounds
// under key: a handler that computed something before asking for input (a
// quote, a reservation id) finds it again with [Recall] when it re-runs
// with the client's answers, instead of computing it anew. It travels
// sealed in the requestState, so the client can neither read nor change it;
// it is kept only when the round ends asking for input (it is the state's
// content), and it counts toward the state's size, which the client sends
// back in every retry. A later Remember of the same key replaces the value.
func Remember(ctx context.Context, key string, value any) error {
	return toolrun.Remember(ctx, key, value)
}

// Recall decodes into dst the value an earlier round (or this one) kept
// under key with [Remember], and reports whether there was one.
func Recall(ctx context.Context, key string, dst any) (bool, error) {
	return toolrun.Recall(ctx, key, dst)
}

// ReportProgress reports a tool's progress: progress increases with every
// report, total is nil when unknown, message may be empty. When the request
// carried _meta.progressToken and accepts text/event-stream, the server
// sends each report as a notifications/progress on the request's stream
// (docs/design.md §6); otherwise the report is dropped, so a tool never needs
// to know how it was called. A value that is not greater than the last one
// delivered, or is NaN, is dropped too: progress must increase. It is safe
// to call from several goroutines of one handler.
func ReportProgress(ctx context.Context, progress float64, total *float64, message string) {
	toolrun.ReportProgress(ctx, progress, total, message)
}
