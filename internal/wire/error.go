package wire

// Error is a JSON-RPC error answer: a Code, a short Message for the wire and
// an optional Data member. It is a value the request path returns; the HTTP
// edge frames it with the request's id (docs/design.md §5).
type Error struct {
	Code    Code
	Message string
	// Data is encoded as the error's data member when non-nil. It must be a
	// value goccy/go-json can encode; it is built by wymcp, never from panics.
	Data any
}

// NewError returns an Error with code's fixed message.
func NewError(code Code) *Error { return &Error{Code: code, Message: code.Message()} }

// Errorf returns an Error with code and a specific message. The message goes
// on the wire, so it must describe the client's input, never server internals.
func Errorf(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// WithData returns a copy of e carrying data.
func (e *Error) WithData(data any) *Error {
	c := *e
	c.Data = data
	return &c
}

// Error implements error.
func (e *Error) Error() string { return e.Code.String() + " " + e.Message }
