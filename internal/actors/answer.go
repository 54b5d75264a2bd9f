package actors

import "github.com/wymcp/wymcp/internal/wire"

// Answer is what a method answered: the whole JSON-RPC message, ready to
// send with HTTP 200, and what telemetry needs to know about it.
type Answer struct {
	// Body is the JSON-RPC response message.
	Body []byte
	// Code is the JSON-RPC error code, 0 for a result.
	Code wire.Code
	// ToolError marks a tools/call result with isError true.
	ToolError bool
}

func resultAnswer(id wire.ID, result []byte) Answer {
	return Answer{Body: wire.AppendResult(make([]byte, 0, len(result)+48), id, result)}
}

func errorAnswer(id wire.ID, e *wire.Error) Answer {
	return Answer{Body: wire.AppendError(nil, id, e), Code: e.Code}
}

// internalError is the answer to a contained fault: a fixed message, never
// the crash reason (DESIGN §5).
func internalError(id wire.ID) Answer {
	return errorAnswer(id, wire.NewError(wire.CodeInternalError))
}
