package actors

import "github.com/wymcp/wymcp/internal/wire"

// Reply is what a method answered, as a value: the encoded result object
// or the error, and what telemetry needs to know. It carries no id and no
// envelope; the HTTP edge wraps every reply, and writes it
// (docs/design.md §3 stage 8).
type Reply struct {
	// Result is the result object's JSON text; nil when Err is set.
	Result []byte
	// Err is the JSON-RPC error of the answer; nil for a result.
	Err *wire.Error
	// ToolError marks a tools/call result whose isError is true.
	ToolError bool
	// InputRequired marks a tools/call answered with an input_required
	// result: the call goes on in a retry (SEP-2322).
	InputRequired bool
}

// Code returns the reply's JSON-RPC error code, 0 for a result.
func (r Reply) Code() wire.Code {
	if r.Err == nil {
		return 0
	}
	return r.Err.Code
}

// internalError is the reply to a contained fault: a fixed message, never
// the crash reason (docs/design.md §5).
var internalError = Reply{Err: wire.NewError(wire.CodeInternalError)}
