package protocol

import (
	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// RawJSON is one JSON value kept as its bytes. A nil RawJSON means the member
// was absent; the four bytes `null` mean it was present and null.
type RawJSON = jsontext.Value

// Unmarshal decodes data into v by the rules the server reads every request
// with: duplicate member names and invalid UTF-8 are errors, names match
// case-sensitively, nesting is bounded, and nothing may follow the value.
// A raw tool's handler can decode its arguments with it and read them as
// the server validated them.
func Unmarshal(data []byte, v any) error { return strictjson.Unmarshal(data, v) }
