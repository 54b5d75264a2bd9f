package protocol

import (
	"bytes"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
)

// RawJSON is one JSON value kept as its bytes. A nil RawJSON means the member
// was absent; the four bytes `null` mean it was present and null.
type RawJSON = jsontext.Value

// MaxDepth bounds nesting in any decoded message: MaxDepth levels of objects
// and arrays are read, the outermost counting as 1, and one more is a syntax
// error. It is the goccy/go-json v2 limit (that of encoding/json/v2), so the
// lexer that reads bodies (lex.go) and decodeStrict, which reads tool
// arguments later, refuse exactly the same bodies.
const MaxDepth = 10000

// decodeStrict decodes data into v with the strict v2 defaults: duplicate
// names and invalid UTF-8 are syntax errors, names match case-sensitively,
// unknown members are ignored, and trailing data is an error.
func decodeStrict(data []byte, v any) error {
	return json.Unmarshal(data, v)
}

// Marshal encodes v with goccy/go-json v2. Maps are encoded with sorted keys
// (Deterministic) so that precomputed answers are byte-stable across builds.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, json.Deterministic(true))
}

// Unmarshal decodes data into v strictly (see the package doc). Tool
// arguments and every other client input go through it.
func Unmarshal(data []byte, v any) error { return decodeStrict(data, v) }

// unquote returns the Go string of a JSON string value, and false if v is not
// a JSON string.
func unquote(v RawJSON) (string, bool) {
	// Fast path: no escapes — the value between the quotes is the string.
	if inner, plain := plainString(v); plain {
		// The strings every request carries come back as constants: a
		// switch on string(bytes) does not allocate, a conversion would.
		switch string(inner) {
		case "2.0":
			return "2.0", true
		case Version:
			return Version, true
		case MethodToolsCall:
			return MethodToolsCall, true
		case MethodToolsList:
			return MethodToolsList, true
		case MethodDiscover:
			return MethodDiscover, true
		}
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

// plainString returns the bytes between the quotes of v when v is a JSON
// string without escapes: then they are the string itself, to compare or
// look up without unquoting (and allocating) it. It reports false for any
// other value, an escaped string included.
func plainString(v RawJSON) ([]byte, bool) {
	// Both quotes are checked, not only the first: a RawJSON need not come
	// from the lexer (Request is a plain struct), and a lone `"` must not
	// slice past its end.
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return nil, false
	}
	return inner, true
}

// kindOf returns the JSON kind of v by its first byte: '{', '[', '"', 'n',
// 't', 'f', or '0' for numbers; 0 when absent.
func kindOf(v RawJSON) byte {
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
