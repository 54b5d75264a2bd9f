package wire

import "errors"

// Error is a JSON-RPC error answer: a Code, a short Message for the wire, an
// optional Data member, and the Go cause behind it, kept for spans and logs
// only (Unwrap) and never written to a client.
type Error struct {
	Code    Code
	Message string
	// Data is encoded as the error's data member when non-nil. It must be a
	// value goccy/go-json can encode; it is built by wymcp, never from panics.
	Data  any
	cause error
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

// WithCause returns a copy of e that wraps cause, for telemetry.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// Error implements error.
func (e *Error) Error() string {
	if e.cause != nil {
		return e.Code.String() + " " + e.Message + ": " + e.cause.Error()
	}
	return e.Code.String() + " " + e.Message
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// CodeOf returns the Code of err: the Code of a *Error in its chain, else
// CodeInternalError, because an error wymcp did not classify is a fault.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}
