package wire

import (
	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// RawJSON is one JSON value kept as its bytes. A nil RawJSON means the
// member was absent; the four bytes `null` mean it was present and null.
// It is the encoder's own raw type, which it writes without a second look.
type RawJSON = jsontext.Value

// Marshal encodes v (strictjson.Marshal: deterministic key order).
func Marshal(v any) ([]byte, error) { return strictjson.Marshal(v) }

// Unmarshal decodes data into v by the strict rules of every client input.
func Unmarshal(data []byte, v any) error { return strictjson.Unmarshal(data, v) }

// unquote returns the Go string of a JSON string value, and false if v is not
// a JSON string. The strings every request carries come back as constants:
// a switch on string(bytes) does not allocate, a conversion would.
func unquote(v RawJSON) (string, bool) {
	if inner, plain := strictjson.PlainString(v); plain {
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
	}
	return strictjson.Unquote(v)
}

// plainString returns the bytes of a JSON string without escapes.
func plainString(v RawJSON) ([]byte, bool) { return strictjson.PlainString(v) }

// kindOf returns the JSON kind of v by its first byte (strictjson.Kind).
func kindOf(v RawJSON) byte { return strictjson.Kind(v) }
