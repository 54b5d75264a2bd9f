package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// An upstream's tools/call result, read and passed on (docs/design.md §10).
// The result is walked member by member on its bytes: what the gateway must
// know (is it an error, does it ask for input) is read, and the rest is
// copied into the gateway's own answer as the upstream wrote it.

// UpstreamResult is what the gateway reads of an upstream's tools/call
// result.
type UpstreamResult struct {
	// InputRequired marks an input_required result (2026-07-28), whose
	// Inputs and State are then set; otherwise the result is complete.
	InputRequired bool
	// IsError is the complete result's isError.
	IsError bool
	// Inputs are an input_required result's inputRequests, in the order
	// sent; Capability is left to the caller.
	Inputs []InputRequest
	// State is an input_required result's requestState, "" when absent.
	State string
}

var (
	errUpstreamResult = errors.New("the result is not an object")
	errUpstreamType   = errors.New(`resultType is neither "complete" nor "input_required"`)
)

// ParseUpstreamResult reads an upstream's tools/call result. A complete
// result must have a content array and may have a boolean isError; an
// input_required one must have inputRequests (an object of {method,
// params} objects) or a string requestState; any member must be valid
// JSON, and names must not repeat. What it does not name is not checked.
func ParseUpstreamResult(raw RawJSON) (UpstreamResult, error) {
	var (
		r        UpstreamResult
		content  bool
		typ      = ResultTypeComplete
		requests RawJSON
		state    bool
	)
	err := eachMember(raw, func(name []byte, v RawJSON) error {
		switch string(name) {
		case "resultType":
			s, ok := strictjson.Unquote(v)
			if !ok {
				return errUpstreamType
			}
			typ = s
		case "content":
			if v[0] != '[' {
				return errors.New("content is not an array")
			}
			content = true
		case "isError":
			switch string(v) {
			case "true":
				r.IsError = true
			case "false":
			default:
				return errors.New("isError is not a boolean")
			}
		case "inputRequests":
			requests = v
		case "requestState":
			if r.State, state = strictjson.Unquote(v); !state {
				return errors.New("requestState is not a string")
			}
		case "_meta":
			// AppendForwardedResult merges it with the gateway's: an
			// upstream _meta that is no object is a result that does not
			// read, not a fault of the server's.
			if v[0] != '{' {
				return errors.New("_meta is not an object")
			}
		}
		return nil
	})
	var (
		syntax *syntaxError
		member *memberError
	)
	switch {
	case err == errNoObject:
		return r, errUpstreamResult
	case errors.As(err, &syntax):
		return r, fmt.Errorf("the result is not valid JSON: %w", syntax.err)
	case errors.As(err, &member):
		return r, fmt.Errorf("member %q is not valid JSON: %w", member.name, member.err)
	case err != nil:
		return r, err
	}
	switch typ {
	case ResultTypeComplete:
		if !content {
			return r, errors.New("a complete result has no content array")
		}
		return r, nil
	case ResultTypeInputRequired:
		r.InputRequired = true
		if requests == nil && !state {
			return r, errors.New("an input_required result has neither inputRequests nor requestState")
		}
		if requests != nil {
			var err error
			if r.Inputs, err = parseInputRequests(requests); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	return r, errUpstreamType
}

// parseInputRequests reads inputRequests: an object whose members are
// {"method": string, "params": object}.
func parseInputRequests(v RawJSON) ([]InputRequest, error) {
	var in []InputRequest
	err := eachMember(v, func(key []byte, entry RawJSON) error {
		method, _ := strictjson.Member(entry, "method")
		m, ok := strictjson.Unquote(method)
		if !ok {
			return fmt.Errorf("inputRequests[%q] has no string method", key)
		}
		params, ok := strictjson.Member(entry, "params")
		if !ok {
			params = RawJSON("{}")
		} else if params[0] != '{' {
			return fmt.Errorf("inputRequests[%q].params is not an object", key)
		}
		in = append(in, InputRequest{Key: string(key), Method: m, Params: params})
		return nil
	})
	var (
		syntax *syntaxError
		member *memberError
	)
	switch {
	case err == errNoObject:
		return nil, errors.New("inputRequests is not an object")
	case errors.As(err, &syntax), errors.As(err, &member):
		return nil, errors.New("inputRequests is not valid JSON")
	}
	return in, err
}

// AppendForwardedResult appends an upstream's complete tools/call result
// raw (checked by ParseUpstreamResult) to dst as the gateway's own: every
// member as the upstream wrote it, except resultType and _meta, which are
// the gateway's. For a 2026-07-28 client the result gets resultType
// "complete" and a _meta whose serverInfo is serverInfo, beside the
// upstream's other _meta members; for a 2025-era one (legacy) it has no
// resultType, keeps the upstream's _meta members but serverInfo, and
// leaves out a structuredContent that is not an object (as
// AppendLegacyCallToolResult does).
func AppendForwardedResult(dst []byte, raw, serverInfo RawJSON, legacy bool) ([]byte, error) {
	var meta RawJSON
	dst = append(dst, '{')
	first := true
	if !legacy {
		dst = append(dst, `"resultType":"complete"`...)
		first = false
	}
	err := eachMember(raw, func(name []byte, v RawJSON) error {
		switch string(name) {
		case "resultType":
			return nil
		case "_meta":
			meta = v
			return nil
		case "structuredContent":
			if legacy && v[0] != '{' {
				return nil
			}
		}
		var err error
		dst, err = appendMember(dst, !first, name, v)
		first = false
		return err
	})
	if err == errNoObject {
		return nil, errUpstreamResult
	}
	if err != nil {
		return nil, err
	}
	if dst, err = appendForwardedMeta(dst, meta, serverInfo, legacy, first); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendForwardedMeta appends the answer's _meta member: the gateway's
// serverInfo (2026-07-28) and the upstream's members but its serverInfo.
// Nothing is written for a 2025-era answer without upstream members.
func appendForwardedMeta(dst []byte, meta, serverInfo RawJSON, legacy, first bool) ([]byte, error) {
	mark := len(dst)
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":{`...)
	empty := true
	if !legacy {
		dst = append(dst, `"`+MetaServerInfo+`":`...)
		dst = append(dst, serverInfo...)
		empty = false
	}
	if meta != nil {
		err := eachMember(meta, func(name []byte, v RawJSON) error {
			if string(name) == MetaServerInfo {
				return nil
			}
			var err error
			dst, err = appendMember(dst, !empty, name, v)
			empty = false
			return err
		})
		if err == errNoObject {
			return nil, errors.New("_meta is not an object")
		}
		if err != nil {
			return nil, err
		}
	}
	if empty {
		return dst[:mark], nil
	}
	return append(dst, '}'), nil
}

// appendMember appends "name":v to an object being written, after a
// comma when comma is set.
func appendMember(dst []byte, comma bool, name []byte, v RawJSON) ([]byte, error) {
	if comma {
		dst = append(dst, ',')
	}
	dst, err := appendQuote(dst, string(name))
	if err != nil {
		return nil, err
	}
	return append(append(dst, ':'), v...), nil
}

// errNoObject is eachMember's error for a value that is not an object.
var errNoObject = errors.New("not an object")

// syntaxError is the object's own syntax failing (a repeated name, a
// missing comma, trailing data); memberError, a member's value.
type (
	syntaxError struct{ err error }
	memberError struct {
		name string
		err  error
	}
)

func (e *syntaxError) Error() string { return e.err.Error() }
func (e *memberError) Error() string { return fmt.Sprintf("member %q: %v", e.name, e.err) }

// eachMember calls fn with each member of the object v, in order: its
// name, unescaped, and its value as the bytes of v. It walks v with the
// strict Lexer and decodes nothing. Its errors: errNoObject, a
// *syntaxError, a *memberError, or fn's, which ends the walk.
func eachMember(v RawJSON, fn func(name []byte, value RawJSON) error) error {
	var (
		l strictjson.Lexer
		o strictjson.Object
	)
	l.Reset(v)
	defer l.Close()
	if l.OpenObject(&o, nil) != nil {
		return errNoObject
	}
	for {
		name, ok, err := l.Member(&o)
		if err != nil {
			return &syntaxError{err}
		}
		if !ok {
			if err := l.End(); err != nil {
				return &syntaxError{err}
			}
			return nil
		}
		start, end, err := l.Value()
		if err != nil {
			return &memberError{string(name), err}
		}
		if err := fn(name, v[start:end:end]); err != nil {
			return err
		}
	}
}

// AppendString appends s as a JSON string. Invalid UTF-8 is replaced by
// U+FFFD, so it cannot fail: it quotes values that came from a peer, such
// as a trace context, into a request of the gateway's own.
func AppendString(dst []byte, s string) []byte {
	if out, err := appendQuote(dst, s); err == nil {
		return out
	}
	return appendQuoteLossy(dst, strings.ToValidUTF8(s, "\uFFFD"))
}

func appendQuoteLossy(dst []byte, s string) []byte {
	out, err := appendQuote(dst, s)
	if err != nil {
		return append(dst, `""`...)
	}
	return out
}
