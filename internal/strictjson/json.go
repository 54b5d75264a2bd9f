package strictjson

import (
	"bytes"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
)

// MaxDepth bounds nesting in anything wymcp reads: MaxDepth levels of
// objects and arrays are read, the outermost counting as 1, and one more is
// a syntax error. It is the goccy/go-json v2 limit (that of
// encoding/json/v2), so the Lexer, which reads bodies, and Unmarshal, which
// decodes tool arguments later, refuse exactly the same inputs.
const MaxDepth = 10000

// Marshal encodes v with goccy/go-json v2. Maps are encoded with sorted keys
// (Deterministic) so that precomputed answers are byte-stable across builds.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, json.Deterministic(true))
}

// Unmarshal decodes data into v with the strict v2 defaults, which are the
// Lexer's rules: duplicate names and invalid UTF-8 are syntax errors, names
// match case-sensitively, unknown members are ignored, and trailing data is
// an error.
func Unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// Valid reports whether data is exactly one strict JSON value.
func Valid(data []byte) bool {
	var l Lexer
	l.Reset(data)
	ok := l.Skip() == nil && l.End() == nil
	l.Close()
	return ok
}

// PlainString returns the bytes between the quotes of v when v is a JSON
// string without escapes: then they are the string itself, to compare or
// look up without unquoting (and allocating) it. It reports false for any
// other value, an escaped string included.
func PlainString(v []byte) ([]byte, bool) {
	// Both quotes are checked, not only the first: v need not come from
	// the Lexer, and a lone `"` must not slice past its end.
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return nil, false
	}
	return inner, true
}

// Unquote returns the Go string of a JSON string value, and false if v is
// not one.
func Unquote(v []byte) (string, bool) {
	if inner, plain := PlainString(v); plain {
		return string(inner), true
	}
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Kind returns the JSON kind of a value by its first byte: '{', '[', '"',
// 'n', 't', 'f', or '0' for a number; 0 for an absent (empty) value.
func Kind(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; c {
	case '{', '[', '"', 'n', 't', 'f':
		return c
	default:
		return '0'
	}
}
