package toolrun

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// A fast path for argument validation.
//
// The full path decodes the arguments into `any` (protocol.Unmarshal) and
// runs the compiled schema (internal/jsonschema): about half of a trivial call's
// time and allocations. Most schemas are simple — inferred ones always are:
// types, properties, required, additionalProperties, items, a few bounds —
// and most arguments are valid, so a validator that reads the raw bytes of
// such a schema's instances once, without decoding or allocating, answers
// most calls.
//
// The rule that keeps it safe: accept returns true only when it is certain
// that protocol.Unmarshal would decode the bytes AND the full validator
// would accept the result. The first half is the strict Lexer's
// (internal/strictjson), the one judge of valid JSON in wymcp, which
// refuses what protocol.Unmarshal refuses; the walk here judges only the
// schema. Anything it does not fully understand — a keyword outside the
// subset (checked once, at construction), an escape in a name or in a
// string whose value matters, a number it cannot compare exactly, an
// object with many names the schema does not know, nesting deeper than
// fastMaxDepth — makes it answer false, which only means "not sure": the
// caller then runs the full path, which alone produces error messages.

const (
	// fastMaxDepth bounds the nesting of both the schema and the instance
	// (objects and arrays). Tool arguments are shallow; a deeper instance
	// is left to the full path, which has its own limit (jsontext: 10000).
	fastMaxDepth = 32
	// fastMaxNames bounds the named members of one object schema
	// (properties plus required names): the names an instance object has
	// are tracked in a uint64, to check "required" without allocating, and
	// the Lexer finds them in a strictjson.Names, which holds as many.
	fastMaxNames = strictjson.MaxNames
	// fastMaxExtra bounds the members of one instance object that the
	// schema does not name; a larger object (a big map argument) takes the
	// full path. The bound dates from when the fast path compared those
	// names with each other itself; the Lexer now refuses a duplicate in an
	// object of any width, and the bound is kept so that the fast path
	// vouches for exactly the arguments it did.
	fastMaxExtra = 32
	// fastMaxMantissa and fastMaxExponent bound the numbers accepted where
	// any number will do: below 10^(100+200) a number is finite as a
	// float64, so goccy decodes it (it refuses values out of range, such as
	// 1e400; it rounds an underflow such as 1e-400 to 0 without error, and
	// the bound keeps numbers far from that anyway).
	fastMaxMantissa = 100
	fastMaxExponent = 200
	// fastMaxPlain is the most digits of an integer the fast path compares
	// (with "integer", "minimum", "maximum"): 15 digits are below 2^53, so
	// goccy's float64 holds the value exactly and int64 comparison agrees
	// with the full validator's exact decimal comparison.
	fastMaxPlain = 15
)

// draft2020 is the `$schema` the fast path takes, as written: the full
// validator also takes it with an empty fragment ("…/schema#"), and
// refuses every other dialect when the tool is built.
const draft2020 = jsonschema.Dialect

// fastKinds is a set of JSON Schema types, as the "type" keyword names them.
type fastKinds uint8

const (
	fastNull fastKinds = 1 << iota
	fastBoolean
	fastObject
	fastArray
	fastNumber  // any number
	fastInteger // a number with no fractional part (see fastMaxPlain)
	fastString

	fastAnyKind = fastNull | fastBoolean | fastObject | fastArray | fastNumber | fastInteger | fastString
)

// fastKindNames maps the "type" names to their kinds.
var fastKindNames = map[string]fastKinds{
	"null": fastNull, "boolean": fastBoolean, "object": fastObject, "array": fastArray,
	"number": fastNumber, "integer": fastInteger, "string": fastString,
}

// fastAnnotations are the keywords that never affect validity with wymcp's
// compiler settings (verified by the differential tests): the 2020-12
// meta-data vocabulary, $comment, and format and content*, which the full
// validator checks at compile time and never asserts (internal/jsonschema).
// Keywords starting with "x-" (such as x-mcp-header) are extensions it
// ignores, as it ignores every unknown keyword.
var fastAnnotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "examples": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"format": true, "contentEncoding": true, "contentMediaType": true,
}

// fastSchema is a schema compiled for the fast path: a tree of fastNodes.
// It is immutable and safe for concurrent use.
type fastSchema struct {
	root *fastNode
}

// fastNode is one (sub)schema of the supported subset. A nil *fastNode is
// the schema that admits everything ({} or true); each keyword applies only
// to instances of its own type, as in JSON Schema.
type fastNode struct {
	// never marks the schema false: no instance is valid.
	never bool
	// types is what "type" admits; fastAnyKind when it is absent.
	types fastKinds

	// String keywords. maxLen < 0: no maxLength. enum and constant, when
	// present, hold only strings, so they also rule out every other type.
	minLen, maxLen int
	hasEnum        bool
	enum           []string
	hasConst       bool
	constant       string

	// Number keywords: integer bounds only.
	hasMin, hasMax bool
	min, max       int64

	// Array keywords. items nil: any item. maxItems < 0: no maxItems.
	items              *fastNode
	minItems, maxItems int

	// Object keywords. names lists the properties, then the required names
	// that are not properties; a name's index is its bit in required and in
	// the seen-set of accept. dict holds the same names in the same order,
	// for the Lexer, which finds each member's name among them.
	// additional nil: additional members may be anything.
	names      []fastName
	dict       *strictjson.Names
	required   uint64
	additional *fastNode
}

// fastName is a member name the object schema knows.
type fastName struct {
	name string
	// property: the name is in "properties", and node is its schema (nil:
	// any). Otherwise the name is only required, and its value falls under
	// additionalProperties like any other member.
	property bool
	node     *fastNode
}

// fastAnyNode stands for a nil *fastNode while scanning.
var fastAnyNode = fastNode{types: fastAnyKind, maxLen: -1, maxItems: -1}

// compileFast compiles a schema document for the fast path, and returns nil
// when any keyword in it, at any depth, is outside the supported subset (or
// the bytes are not a schema at all: compile reports that). It reads the
// document as compile does, with numbers as json.Number, so bounds are
// exact.
func compileFast(raw []byte) *fastSchema {
	if raw == nil {
		return nil
	}
	doc, err := jsonschema.Decode(raw)
	if err != nil {
		return nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil
	}
	root, ok := compileFastNode(doc, 0)
	if !ok {
		return nil
	}
	return &fastSchema{root: root}
}

// compileFastNode compiles one subschema; ok is false when it is outside
// the subset.
func compileFastNode(v any, depth int) (n *fastNode, ok bool) {
	if depth > fastMaxDepth {
		return nil, false
	}
	switch v := v.(type) {
	case bool:
		if v {
			return nil, true
		}
		return &fastNode{never: true}, true
	case map[string]any:
		return compileFastObject(v, depth)
	}
	return nil, false
}

// compileFastObject compiles an object schema keyword by keyword.
func compileFastObject(m map[string]any, depth int) (*fastNode, bool) {
	n := &fastNode{types: fastAnyKind, maxLen: -1, maxItems: -1}
	var props map[string]any
	var required []any
	trivial := true // no keyword but annotations: the schema is {}
	for key, val := range m {
		if fastAnnotations[key] || strings.HasPrefix(key, "x-") {
			continue
		}
		trivial = false
		var ok bool
		switch key {
		case "$schema":
			// Only the root may say which draft it is; compileFast checked it.
			ok = depth == 0 && val == draft2020
		case "type":
			n.types, ok = fastTypes(val)
		case "properties":
			props, ok = val.(map[string]any)
		case "required":
			required, ok = val.([]any)
		case "additionalProperties":
			n.additional, ok = compileFastNode(val, depth+1)
		case "items":
			n.items, ok = compileFastNode(val, depth+1)
		case "enum":
			n.hasEnum = true
			n.enum, ok = fastStrings(val)
		case "const":
			n.hasConst = true
			n.constant, ok = val.(string)
		case "minLength":
			n.minLen, ok = fastCount(val)
		case "maxLength":
			n.maxLen, ok = fastCount(val)
		case "minItems":
			n.minItems, ok = fastCount(val)
		case "maxItems":
			n.maxItems, ok = fastCount(val)
		case "minimum":
			n.hasMin = true
			n.min, ok = fastBound(val)
		case "maximum":
			n.hasMax = true
			n.max, ok = fastBound(val)
		}
		if !ok {
			return nil, false
		}
	}
	if trivial {
		return nil, true
	}
	// Properties first, in name order (map order is random; any order is
	// correct, a fixed one makes the scan's cost repeatable).
	for _, name := range slices.Sorted(maps.Keys(props)) {
		node, ok := compileFastNode(props[name], depth+1)
		if !ok {
			return nil, false
		}
		n.names = append(n.names, fastName{name: name, property: true, node: node})
	}
	for _, r := range required {
		name, ok := r.(string)
		if !ok {
			return nil, false
		}
		i := slices.IndexFunc(n.names, func(f fastName) bool { return f.name == name })
		if i < 0 {
			i = len(n.names)
			n.names = append(n.names, fastName{name: name})
		}
		if i >= fastMaxNames {
			return nil, false
		}
		n.required |= 1 << i
	}
	if len(n.names) > fastMaxNames {
		return nil, false
	}
	if len(n.names) > 0 {
		list := make([]string, len(n.names))
		for i, f := range n.names {
			list[i] = f.name
		}
		n.dict = strictjson.NewNames(list...)
	}
	return n, true
}

// fastTypes reads "type": one name or an array of names.
func fastTypes(v any) (fastKinds, bool) {
	switch v := v.(type) {
	case string:
		k, ok := fastKindNames[v]
		return k, ok
	case []any:
		var ks fastKinds
		for _, e := range v {
			s, _ := e.(string)
			k, ok := fastKindNames[s]
			if !ok {
				return 0, false
			}
			ks |= k
		}
		return ks, ks != 0
	}
	return 0, false
}

// fastStrings reads an enum whose values are all strings.
func fastStrings(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// fastCount reads a length or item count written as plain digits (2, not
// 2.0 or 2e0, which the full path takes).
func fastCount(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(string(num), 10, 31)
	return int(n), err == nil
}

// fastBound reads a minimum or maximum written as a plain integer that fits
// an int64.
func fastBound(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	return n, err == nil
}
