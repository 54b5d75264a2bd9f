package upstream

import (
	"errors"
	"strconv"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// message is one JSON-RPC message an upstream sent: a response (id and
// result or error), a request (id and method) or a notification (method
// alone). Its members are the bytes of the body it was read from.
type message struct {
	id     wire.RawJSON
	method string
	params wire.RawJSON
	result wire.RawJSON
	err    *rpcError
}

// rpcError is a JSON-RPC error object an upstream sent.
type rpcError struct {
	code    int64
	message string
	data    wire.RawJSON
}

var errNotJSONRPC = errors.New("not a JSON-RPC 2.0 message")

// parseMessage reads one JSON-RPC message. Anything but an object with
// "jsonrpc":"2.0" and the members of exactly one kind of message is an
// error; members it does not know are ignored.
func parseMessage(b []byte) (message, error) {
	var (
		m       message
		l       strictjson.Lexer
		o       strictjson.Object
		version bool
		errRaw  wire.RawJSON
	)
	l.Reset(b)
	defer l.Close()
	if l.OpenObject(&o, nil) != nil {
		return m, errNotJSONRPC
	}
	for {
		name, ok, err := l.Member(&o)
		if err != nil {
			return m, errNotJSONRPC
		}
		if !ok {
			break
		}
		start, end, err := l.Value()
		if err != nil {
			return m, errNotJSONRPC
		}
		v := wire.RawJSON(b[start:end:end])
		switch string(name) {
		case "jsonrpc":
			version = string(v) == `"2.0"`
		case "id":
			if v[0] != '"' && !isInteger(v) {
				if string(v) != "null" {
					return m, errors.New("the id is neither a string nor an integer")
				}
				continue
			}
			m.id = v
		case "method":
			s, ok := strictjson.Unquote(v)
			if !ok || s == "" {
				return m, errors.New("the method is not a string")
			}
			m.method = s
		case "params":
			m.params = v
		case "result":
			m.result = v
		case "error":
			errRaw = v
		}
	}
	if l.End() != nil || !version {
		return m, errNotJSONRPC
	}
	switch {
	case m.method != "":
		if m.result != nil || errRaw != nil {
			return m, errNotJSONRPC
		}
	case m.id == nil && errRaw == nil:
		return m, errors.New("a response without an id")
	case (m.result == nil) == (errRaw == nil):
		return m, errors.New("a response has exactly one of result and error")
	case errRaw != nil:
		e, err := parseError(errRaw)
		if err != nil {
			return m, err
		}
		m.err = e
	}
	return m, nil
}

// parseError reads a JSON-RPC error object: an integer code and a string
// message are required, data is kept as sent.
func parseError(v wire.RawJSON) (*rpcError, error) {
	bad := errors.New("the error is not an object with an integer code and a string message")
	if strictjson.Kind(v) != '{' {
		return nil, bad
	}
	code, ok := strictjson.Member(v, "code")
	if !ok || !isInteger(code) {
		return nil, bad
	}
	n, err := strconv.ParseInt(string(code), 10, 64)
	if err != nil {
		return nil, bad
	}
	msg, _ := strictjson.Member(v, "message")
	text, ok := strictjson.Unquote(msg)
	if !ok {
		return nil, bad
	}
	data, _ := strictjson.Member(v, "data")
	return &rpcError{code: n, message: text, data: data}, nil
}

// isInteger reports whether v is a JSON number without fraction or
// exponent.
func isInteger(v []byte) bool {
	if len(v) > 0 && v[0] == '-' {
		v = v[1:]
	}
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
