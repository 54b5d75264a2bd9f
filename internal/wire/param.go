package wire

import (
	"strconv"
)

// CheckParamHeader compares one Mcp-Param-<Name> header with the argument it
// mirrors (SEP-2243; DESIGN §5: -32020 on any disagreement). header is the
// header's value with OWS trimmed and present says whether it was sent; arg
// is the argument as decoded (nil when absent or null).
//
// An argument that is present requires the header; an absent or null one
// requires its absence. Values are compared after Base64-sentinel decoding:
// strings exactly, integers numerically (so "042" matches 42), booleans as
// "true" or "false".
func CheckParamHeader(name, header string, present bool, arg any) *Error {
	key := "Mcp-Param-" + name
	if arg == nil {
		if present {
			return headerError("the " + key + " header is sent but its argument is absent")
		}
		return nil
	}
	if !present {
		return headerError("the " + key + " header is required")
	}
	v, ok := DecodeHeaderValue(header)
	if !ok {
		return headerError("the " + key + " header has an invalid Base64 value")
	}
	match := false
	switch a := arg.(type) {
	case string:
		match = v == a
	case bool:
		match = v == strconv.FormatBool(a)
	case float64:
		n, err := strconv.ParseInt(v, 10, 64)
		match = err == nil && float64(n) == a
	}
	if !match {
		return headerError("the " + key + " header does not match the argument")
	}
	return nil
}
