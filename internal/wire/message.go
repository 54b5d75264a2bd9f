package wire

import (
	"bytes"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// Kind is what a message is, once classified (docs/design.md §3 stage 2).
type Kind uint8

const (
	// KindRequest is a JSON-RPC request: it has an id and wants an answer.
	KindRequest Kind = iota + 1
	// KindNotification has no id; over HTTP it is answered 202 Accepted and
	// never reaches a method.
	KindNotification
)

// Message is a classified client message: a request or a notification. The
// other kinds (responses, batches, invalid objects) are refused by Parse.
type Message struct {
	Kind   Kind
	ID     ID
	Method string
	// Params is the params member as sent; nil when absent.
	Params RawJSON

	// parsed is what Parse found in the body, and the Request that
	// ParseRequest fills from it.
	parsed *parsed
}

// parsed is what Parse keeps of a message: the fields the scan found and
// the Request ParseRequest builds from them. They live and die with the
// message, so one object serves both: one allocation fewer, on the path
// every request takes.
type parsed struct {
	fields fields
	req    Request
}

// Scratch is the space one message is parsed into (ParseInto): a caller
// that reuses it across messages, as the HTTP edge does with its pooled
// request buffers, parses without allocating. A message, its Request and
// every RawJSON in them refer into the Scratch and the body: both must stay
// untouched until the message is done with.
type Scratch struct {
	p parsed
	// sc is the scanner, which keeps its lexer's buffers across messages.
	sc scanner
}

// Parse decodes and classifies one HTTP body (docs/design.md §3 stage 2).
//
// On failure it returns the *Error to answer and the id when it could be
// read (the zero ID otherwise): -32700 for anything that is not one strict
// JSON value (empty, truncated, duplicate member names, invalid UTF-8, lone
// surrogates, nesting past MaxDepth); -32600 for valid JSON that is not a
// single JSON-RPC 2.0 request or notification (a batch, a posted response,
// a wrong jsonrpc member, a missing method, an id of the wrong type).
func Parse(body []byte) (Message, ID, *Error) { return ParseInto(new(Scratch), body) }

// ParseInto is Parse into s, which it resets first.
func ParseInto(s *Scratch, body []byte) (Message, ID, *Error) {
	start := valueStart(body)
	if start < 0 || body[start] != '{' {
		// Not an object. Valid JSON (a batch array, a string…) is an
		// invalid request; anything else cannot be parsed.
		if len(bytes.TrimSpace(body)) == 0 || !strictjson.Valid(body) {
			return Message{}, ID{}, errParse
		}
		return Message{}, ID{}, errNotObject
	}
	s.p = parsed{}
	p := &s.p
	w := &p.fields
	if err := scan(&s.sc, body, w); err != nil {
		// What was read before the error is thrown away with w. A body too
		// long for fields' offsets (errBodyTooLong, far past what the
		// transport lets through) could not be read either: -32700 too.
		return Message{}, ID{}, errParse
	}
	id, idErr := parseID(w.raw(w.id))
	if idErr != nil {
		// An id that is present but not a string or an integer, or too
		// long, is not echoed.
		return Message{}, ID{}, idErr
	}
	if v, ok := unquote(w.raw(w.jsonrpc)); !ok || v != "2.0" {
		return Message{}, id, errNotJSONRPC
	}
	if w.result.present() || w.error.present() {
		// Clients must not post responses: the server sends no requests.
		return Message{}, id, errResponse
	}
	method, ok := unquote(w.raw(w.method))
	if !ok {
		return Message{}, id, errNoMethod
	}
	m := Message{Kind: KindRequest, ID: id, Method: method, Params: w.raw(w.params), parsed: p}
	if id.IsZero() {
		m.Kind = KindNotification
	}
	return m, id, nil
}

var (
	errParse      = Errorf(CodeParseError, "Parse error: the body must be one JSON value (strict: no duplicate member names, valid UTF-8)")
	errNotObject  = Errorf(CodeInvalidRequest, "Invalid Request: the body must be a single JSON-RPC request or notification object (batches are not supported)")
	errBadID      = Errorf(CodeInvalidRequest, "Invalid Request: id must be a string or an integer")
	errLongID     = Errorf(CodeInvalidRequest, "Invalid Request: id too long (its JSON text may be at most 1024 bytes)")
	errNotJSONRPC = Errorf(CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
	errResponse   = Errorf(CodeInvalidRequest, "Invalid Request: clients must not send responses")
	errNoMethod   = Errorf(CodeInvalidRequest, "Invalid Request: method must be a string")
)

// startsValue marks the bytes that can start a JSON value.
var startsValue = func() (t [256]bool) {
	for _, c := range []byte("{[\"tfn-0123456789") {
		t[c] = true
	}
	return t
}()

// valueStart returns the index of the first byte of body that can start a
// JSON value, or -1. It is bytes.IndexAny with that set, without building
// the set on every call.
func valueStart(body []byte) int {
	for i, c := range body {
		if startsValue[c] {
			return i
		}
	}
	return -1
}
