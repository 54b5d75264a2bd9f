package wire

import "strconv"

// Code is a JSON-RPC error code. The catalogue below is the whole set wymcp
// emits (docs/design.md §5); there is no CodeOK because success is not an
// error.
type Code int32

// The JSON-RPC 2.0 codes and the three codes of MCP 2026-07-28 (basic/index.mdx,
// Error Codes). Codes in -32020..-32099 are reserved to the specification; only
// these three exist in this revision, so wymcp emits no other code there.
const (
	// CodeParseError: the body is not one strict JSON value.
	CodeParseError Code = -32700
	// CodeInvalidRequest: valid JSON, but not a single JSON-RPC 2.0 request or
	// notification (a batch, a response, a bad id), or refused at the HTTP edge.
	CodeInvalidRequest Code = -32600
	// CodeMethodNotFound: a method outside server/discover, tools/list,
	// tools/call (in a 2025 era served: initialize, ping, tools/list,
	// tools/call).
	CodeMethodNotFound Code = -32601
	// CodeInvalidParams: a malformed `_meta` envelope, an unknown tool, a bad cursor.
	CodeInvalidParams Code = -32602
	// CodeInternalError: a fault the server contained, or overload.
	CodeInternalError Code = -32603
	// CodeHeaderMismatch: an MCP header is missing, malformed or disagrees with the body.
	CodeHeaderMismatch Code = -32020
	// CodeMissingRequiredClientCapability: the tool needs a client capability
	// the request did not declare; data.requiredCapabilities names it.
	CodeMissingRequiredClientCapability Code = -32021
	// CodeUnsupportedProtocolVersion: data.supported and data.requested say why.
	CodeUnsupportedProtocolVersion Code = -32022
)

// String returns the code in decimal, the form OpenTelemetry's
// rpc.response.status_code and error.type attributes take.
func (c Code) String() string { return strconv.Itoa(int(c)) }

// Message returns the fixed, short message that goes on the wire with c.
// Messages never carry panic text, stacks or internal detail.
func (c Code) Message() string {
	switch c {
	case CodeParseError:
		return "Parse error"
	case CodeInvalidRequest:
		return "Invalid Request"
	case CodeMethodNotFound:
		return "Method not found"
	case CodeInvalidParams:
		return "Invalid params"
	case CodeInternalError:
		return "Internal error"
	case CodeHeaderMismatch:
		return "Header mismatch"
	case CodeMissingRequiredClientCapability:
		return "Missing required client capability"
	case CodeUnsupportedProtocolVersion:
		return "Unsupported protocol version"
	}
	return "Server error"
}
