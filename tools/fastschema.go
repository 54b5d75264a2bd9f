package tools

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A fast path for argument validation.
//
// The full path decodes the arguments into `any` (protocol.Unmarshal) and
// runs the compiled santhosh-tekuri schema: about half of a trivial call's
// time and allocations. Most schemas are simple — inferred ones always are:
// types, properties, required, additionalProperties, items, a few bounds —
// and most arguments are valid, so a validator that reads the raw bytes of
// such a schema's instances once, without decoding or allocating, answers
// most calls.
//
// The rule that keeps it safe: accept returns true only when it is certain
// that protocol.Unmarshal would decode the bytes AND the full validator
// would accept the result. Anything it does not fully understand — a
// keyword outside the subset (checked once, at construction), an escape in
// a string whose value matters, a number it cannot compare exactly, an
// object too large to check for duplicate names, nesting deeper than
// fastMaxDepth — makes it answer false, which only means "not sure": the
// caller then runs the full path, which alone produces error messages.

const (
	// fastMaxDepth bounds the nesting of both the schema and the instance
	// (objects and arrays). Tool arguments are shallow; a deeper instance
	// is left to the full path, which has its own limit (jsontext: 10000).
	fastMaxDepth = 32
	// fastMaxNames bounds the named members of one object schema
	// (properties plus required names): they are tracked in a uint64 so
	// that a repeated name is seen without allocating.
	fastMaxNames = 64
	// fastMaxExtra bounds the members of one instance object that the
	// schema does not name. Duplicates among them are found by comparing
	// each with every earlier one, in a fixed array on the stack; a larger
	// object (a big map argument) takes the full path.
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
	// with santhosh's big.Rat comparison.
	fastMaxPlain = 15
)

// draft2020 is the only `$schema` the fast path takes: wymcp compiles with
// 2020-12 as the default draft, and another draft changes semantics (draft
// 7 asserts "format", for one).
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

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
// meta-data vocabulary, $comment, and format and content*, which santhosh
// asserts only with AssertFormat/AssertContent or under a meta-schema with
// the format-assertion vocabulary — none of which wymcp uses. Keywords
// starting with "x-" (such as x-mcp-header) are extensions santhosh ignores.
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
	// the seen-set of accept. index speeds up the lookup of many names.
	// additional nil: additional members may be anything.
	names      []fastName
	index      map[string]int
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
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
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
	if len(n.names) > 8 {
		n.index = make(map[string]int, len(n.names))
		for i, f := range n.names {
			n.index[f.name] = i
		}
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

// lookupBytes returns the index in n.names of a member name of the
// instance, or -1. Go does not allocate for string(name) used as a map key
// or in a comparison.
func (n *fastNode) lookupBytes(name []byte) int {
	if n.index != nil {
		if i, ok := n.index[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range n.names {
		if n.names[i].name == string(name) {
			return i
		}
	}
	return -1
}

// accept reports whether raw is certainly one strict JSON value that
// protocol.Unmarshal decodes and the full validator accepts. false means
// only "not sure": the caller must run the full path. It does not allocate.
func (f *fastSchema) accept(raw []byte) bool {
	if len(raw) > math.MaxInt32 {
		return false // member spans are int32
	}
	s := fastScanner{b: raw}
	s.space()
	if !s.value(f.root, 0) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// fastScanner reads one JSON text and checks it against a fastNode tree in
// the same pass. Every method returns false on anything it cannot vouch
// for, leaving i wherever it stopped.
type fastScanner struct {
	b []byte
	i int
}

// peek returns the next byte, or 0 at the end: NUL is not valid anywhere
// the scanner peeks, so the end needs no case of its own.
func (s *fastScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// space skips the four whitespace bytes of RFC 8259.
func (s *fastScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value checks the value at i against n (nil: anything) and moves past it.
// depth counts the objects and arrays it is inside of.
func (s *fastScanner) value(n *fastNode, depth int) bool {
	if n == nil {
		n = &fastAnyNode
	}
	if n.never {
		return false
	}
	c := s.peek()
	if c == '"' {
		return n.types&fastString != 0 && s.stringValue(n)
	}
	// enum and const hold only strings: no other value can match them.
	if n.hasEnum || n.hasConst {
		return false
	}
	switch c {
	case '{':
		return n.types&fastObject != 0 && depth < fastMaxDepth && s.object(n, depth+1)
	case '[':
		return n.types&fastArray != 0 && depth < fastMaxDepth && s.array(n, depth+1)
	case 't':
		return n.types&fastBoolean != 0 && s.literal("true")
	case 'f':
		return n.types&fastBoolean != 0 && s.literal("false")
	case 'n':
		return n.types&fastNull != 0 && s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.numberValue(n)
	}
	return false
}

// literal checks for true, false or null.
func (s *fastScanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// stringValue checks a string against n's string keywords. enum and const
// compare the bytes between the quotes, so they need a string without
// escapes; the length is counted in code points, as santhosh counts it.
func (s *fastScanner) stringValue(n *fastNode) bool {
	start := s.i + 1
	runes, escaped, ok := s.str()
	if !ok {
		return false
	}
	if n.hasEnum || n.hasConst {
		if escaped {
			return false
		}
		v := s.b[start : s.i-1]
		if n.hasConst && string(v) != n.constant {
			return false
		}
		if n.hasEnum && !slices.ContainsFunc(n.enum, func(e string) bool { return e == string(v) }) {
			return false
		}
	}
	return runes >= n.minLen && (n.maxLen < 0 || runes <= n.maxLen)
}

// str moves past the string at i (which is '"') and returns its length in
// code points and whether it had escapes. It refuses what jsontext refuses —
// control bytes, invalid UTF-8, unknown escapes — and also every \u escape
// of a surrogate: a pair is valid JSON, but refusing them all keeps the
// rule simple and makes each escape exactly one code point, so the count
// is exact with escapes too.
func (s *fastScanner) str() (runes int, escaped, ok bool) {
	b := s.b
	i := s.i + 1
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return runes, escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, false
				}
				r, ok := hex4(b[i+2 : i+6])
				if !ok || 0xD800 <= r && r <= 0xDFFF {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, false
			}
			i += size
		}
		runes++
	}
	return 0, false, false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// numberValue checks a number against n. A type of "integer" without
// "number", and the bounds, need the exact value: only a plain integer of
// at most fastMaxPlain digits gives it.
func (s *fastScanner) numberValue(n *fastNode) bool {
	v, plain, ok := s.number()
	switch {
	case !ok:
		return false
	case n.types&fastNumber != 0:
	case n.types&fastInteger != 0:
		if !plain {
			return false
		}
	default:
		return false
	}
	if n.hasMin || n.hasMax {
		if !plain || n.hasMin && v < n.min || n.hasMax && v > n.max {
			return false
		}
	}
	return true
}

// number moves past a number in RFC 8259 grammar whose magnitude goccy can
// decode (see fastMaxMantissa). plain reports an integer without fraction
// or exponent of at most fastMaxPlain digits, whose value is v.
func (s *fastScanner) number() (v int64, plain, ok bool) {
	b := s.b
	i := s.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return 0, false, false
	}
	intEnd := i
	mantissa := intEnd - start
	plain = true
	if i < len(b) && b[i] == '.' {
		plain = false
		i++
		f := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == f {
			return 0, false, false
		}
		mantissa += i - f
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		plain = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		e := i
		exp := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			exp = exp*10 + int(b[i]-'0')
			i++
			if exp > fastMaxExponent {
				return 0, false, false
			}
		}
		if i == e {
			return 0, false, false
		}
	}
	if mantissa > fastMaxMantissa {
		return 0, false, false
	}
	s.i = i
	if !plain || intEnd-start > fastMaxPlain {
		return 0, false, true
	}
	for _, c := range b[start:intEnd] {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true, true
}

// fastSpan is where a member name lies in the input, for duplicate checks.
type fastSpan struct{ start, end int32 }

// object checks an object against n's object keywords. A repeated name
// makes jsontext refuse the whole text, so names are checked for
// duplicates: the names n knows by a bit each, the others against each
// other (at most fastMaxExtra). A name with escapes could equal another
// once decoded, so it takes the full path.
func (s *fastScanner) object(n *fastNode, depth int) bool {
	s.i++ // '{'
	var seen uint64
	var extra [fastMaxExtra]fastSpan
	extras := 0
	s.space()
	if s.peek() == '}' {
		s.i++
		return n.required == 0
	}
	for {
		if s.peek() != '"' {
			return false
		}
		start := s.i + 1
		if _, escaped, ok := s.str(); !ok || escaped {
			return false
		}
		end := s.i - 1
		name := s.b[start:end]
		child := n.additional
		if i := n.lookupBytes(name); i >= 0 {
			if seen&(1<<i) != 0 {
				return false
			}
			seen |= 1 << i
			if f := &n.names[i]; f.property {
				child = f.node
			}
		} else {
			if child != nil && child.never {
				return false // additionalProperties: false
			}
			for _, sp := range extra[:extras] {
				if string(s.b[sp.start:sp.end]) == string(name) {
					return false
				}
			}
			if extras == fastMaxExtra {
				return false
			}
			extra[extras] = fastSpan{int32(start), int32(end)}
			extras++
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value(child, depth) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return seen&n.required == n.required
		default:
			return false
		}
	}
}

// array checks an array against n's array keywords.
func (s *fastScanner) array(n *fastNode, depth int) bool {
	s.i++ // '['
	count := 0
	s.space()
	if s.peek() == ']' {
		s.i++
		return n.minItems == 0
	}
	for {
		if !s.value(n.items, depth) {
			return false
		}
		count++
		if n.maxItems >= 0 && count > n.maxItems {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return count >= n.minItems
		default:
			return false
		}
	}
}
