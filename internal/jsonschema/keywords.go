package jsonschema

import (
	"encoding/json"
	"maps"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fill compiles an object schema's keywords into n, checking each value as
// the 2020-12 meta-schema would: this function is that meta-schema, in code
// (so it costs no heap). Unknown keywords are ignored, as 2020-12 says.
func (c *compiler) fill(n *node, obj map[string]any, loc string) error {
	if err := c.checkAnnotations(obj, loc); err != nil {
		return err
	}
	k := keywords{c: c, obj: obj, loc: loc}
	n.minLength, n.maxLength = k.count("minLength"), k.count("maxLength")
	n.minItems, n.maxItems = k.count("minItems"), k.count("maxItems")
	n.minProperties, n.maxProperties = k.count("minProperties"), k.count("maxProperties")
	n.minContains, n.maxContains = k.count("minContains"), k.count("maxContains")
	if n.minContains < 0 {
		n.minContains = 1
	}
	n.minimum, n.maximum = k.number("minimum"), k.number("maximum")
	n.exclusiveMinimum, n.exclusiveMaximum = k.number("exclusiveMinimum"), k.number("exclusiveMaximum")
	if n.multipleOf = k.number("multipleOf"); n.multipleOf != nil && n.multipleOf.rat.Sign() <= 0 {
		k.fail("multipleOf", "want a number greater than 0")
	}
	n.types = k.types()
	n.uniqueItems = k.boolean("uniqueItems")
	n.pattern = k.regexp("pattern", obj["pattern"])
	n.required = k.strings("required")
	if v, ok := obj["const"]; ok {
		n.hasConst = true
		n.constant = k.value("const", v)
	}
	if v, ok := obj["enum"]; ok {
		list, isList := v.([]any)
		if !isList {
			k.fail("enum", "want an array")
		}
		n.hasEnum = true
		for _, e := range list {
			n.enum = append(n.enum, k.value("enum", e))
		}
	}
	n.ref = k.reference("$ref")
	n.dynRef = k.reference("$dynamicRef")
	if n.dynRef != nil {
		n.dynName = k.dynamicName()
	}

	n.not, n.ifS, n.thenS, n.elseS = k.schema("not"), k.schema("if"), k.schema("then"), k.schema("else")
	n.items, n.contains = k.schema("items"), k.schema("contains")
	n.additionalProperties, n.propertyNames = k.schema("additionalProperties"), k.schema("propertyNames")
	n.unevaluatedItems, n.unevaluatedProperties = k.schema("unevaluatedItems"), k.schema("unevaluatedProperties")
	n.uneval = n.unevaluatedItems != nil || n.unevaluatedProperties != nil
	k.schema("contentSchema") // an annotation: checked, never applied
	n.allOf, n.anyOf, n.oneOf = k.schemas("allOf"), k.schemas("anyOf"), k.schemas("oneOf")
	n.prefixItems = k.schemas("prefixItems")
	k.schemaMap("$defs")
	k.schemaMap("definitions")
	if props := k.schemaMap("properties"); len(props) > 0 {
		n.properties = props
		n.propertyOrder = slices.Sorted(maps.Keys(props))
	}
	patterns := k.schemaMap("patternProperties")
	for _, src := range slices.Sorted(maps.Keys(patterns)) {
		if re := k.regexp("patternProperties", src); re != nil {
			n.patternProperties = append(n.patternProperties, patternProperty{re: re, node: patterns[src]})
		}
	}
	deps := k.schemaMap("dependentSchemas")
	for _, name := range slices.Sorted(maps.Keys(deps)) {
		n.dependentSchemas = append(n.dependentSchemas, dependentSchema{name: name, node: deps[name]})
	}
	n.dependentRequired = k.dependentRequired()
	k.dependencies(n)
	return k.err
}

// keywords reads one schema object's keywords. The first failure is kept
// in err; the readers return zero values after it.
type keywords struct {
	c   *compiler
	obj map[string]any
	loc string
	err error
}

func (k *keywords) fail(kw, format string, args ...any) {
	if k.err == nil {
		k.err = k.c.errorf(k.loc, kw, format, args...)
	}
}

// count reads a non-negative integer keyword; -1 when absent.
func (k *keywords) count(kw string) int {
	v, ok := k.obj[kw]
	if !ok {
		return -1
	}
	n := k.exact(kw, v, "want a non-negative integer")
	if n == nil {
		return -1
	}
	if !n.rat.IsInt() || n.rat.Sign() < 0 {
		k.fail(kw, "want a non-negative integer")
		return -1
	}
	if !n.rat.Num().IsInt64() || n.rat.Num().Int64() > 1<<31-1 {
		return 1<<31 - 1 // more than any instance can have
	}
	return int(n.rat.Num().Int64())
}

// number reads a number keyword; nil when absent.
func (k *keywords) number(kw string) *number {
	v, ok := k.obj[kw]
	if !ok {
		return nil
	}
	return k.exact(kw, v, "want a number")
}

// exact reads a schema number, failing with want when v is not one (and
// on a number newNumber refuses).
func (k *keywords) exact(kw string, v any, want string) *number {
	num, isNum := v.(json.Number)
	if !isNum {
		k.fail(kw, "%s", want)
		return nil
	}
	n, err := newNumber(num)
	if err != nil {
		k.fail(kw, "%v", err)
	}
	return n
}

// value normalizes a value written in the schema: "const", an "enum" item.
func (k *keywords) value(kw string, v any) any {
	norm, err := normalize(v)
	if err != nil {
		k.fail(kw, "%v", err)
	}
	return norm
}

func (k *keywords) boolean(kw string) bool {
	v, ok := k.obj[kw]
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		k.fail(kw, "want a boolean")
	}
	return b
}

// types reads "type": one type name, or a non-empty array of distinct ones.
func (k *keywords) types() kinds {
	v, ok := k.obj["type"]
	if !ok {
		return 0
	}
	one := func(s any) kinds {
		name, _ := s.(string)
		for _, kn := range kindNames {
			if kn.name == name {
				return kn.kind
			}
		}
		return 0
	}
	switch v := v.(type) {
	case string:
		if t := one(v); t != 0 {
			return t
		}
	case []any:
		var ts kinds
		for _, e := range v {
			t := one(e)
			if t == 0 || ts&t != 0 {
				ts = 0
				break
			}
			ts |= t
		}
		if ts != 0 {
			return ts
		}
	}
	k.fail("type", "want a type name or a non-empty array of distinct type names")
	return 0
}

// regexp compiles a pattern. Patterns are RE2: one RE2 cannot compile is
// refused rather than matched differently.
func (k *keywords) regexp(kw string, v any) *regexp.Regexp {
	if v == nil {
		return nil
	}
	src, ok := v.(string)
	if !ok {
		k.fail(kw, "want a string")
		return nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		k.fail(kw, "%q is not a regular expression wymcp can run (RE2): %v", src, err)
		return nil
	}
	return re
}

// strings reads an array of distinct strings ("required").
func (k *keywords) strings(kw string) []string {
	v, ok := k.obj[kw]
	if !ok {
		return nil
	}
	out, ok := stringArray(v)
	if !ok {
		k.fail(kw, "want an array of distinct strings")
	}
	return out
}

func stringArray(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok || slices.Contains(out, s) {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// schema compiles a keyword whose value is a schema; nil when absent.
func (k *keywords) schema(kw string) *node {
	if _, ok := k.obj[kw]; !ok || k.err != nil {
		return nil
	}
	n, err := k.c.compile(k.loc + "/" + escape(kw))
	if err != nil {
		k.err = err
	}
	return n
}

// schemas compiles a keyword whose value is a non-empty array of schemas.
func (k *keywords) schemas(kw string) []*node {
	v, ok := k.obj[kw]
	if !ok || k.err != nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		k.fail(kw, "want a non-empty array of schemas")
		return nil
	}
	out := make([]*node, len(list))
	for i := range list {
		n, err := k.c.compile(k.loc + "/" + kw + "/" + strconv.Itoa(i))
		if err != nil {
			k.err = err
			return nil
		}
		out[i] = n
	}
	return out
}

// schemaMap compiles a keyword whose value is an object of schemas.
func (k *keywords) schemaMap(kw string) map[string]*node {
	v, ok := k.obj[kw]
	if !ok || k.err != nil {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		k.fail(kw, "want an object of schemas")
		return nil
	}
	out := make(map[string]*node, len(m))
	for name := range m {
		n, err := k.c.compile(k.loc + "/" + escape(kw) + "/" + escape(name))
		if err != nil {
			k.err = err
			return nil
		}
		out[name] = n
	}
	return out
}

// dependentRequired reads "dependentRequired": an object of string arrays.
func (k *keywords) dependentRequired() []dependency {
	v, ok := k.obj["dependentRequired"]
	if !ok {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		k.fail("dependentRequired", "want an object of string arrays")
		return nil
	}
	var out []dependency
	for _, name := range slices.Sorted(maps.Keys(m)) {
		needs, ok := stringArray(m[name])
		if !ok {
			k.fail("dependentRequired", "%q: want an array of distinct strings", name)
			return nil
		}
		out = append(out, dependency{name: name, needs: needs})
	}
	return out
}

// dependencies reads the deprecated "dependencies", which the 2020-12
// meta-schema still describes: each member is a schema (as in
// dependentSchemas) or a string array (as in dependentRequired).
func (k *keywords) dependencies(n *node) {
	v, ok := k.obj["dependencies"]
	if !ok || k.err != nil {
		return
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		k.fail("dependencies", "want an object")
		return
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if _, isList := m[name].([]any); isList {
			needs, ok := stringArray(m[name])
			if !ok {
				k.fail("dependencies", "%q: want a schema or an array of distinct strings", name)
				return
			}
			n.dependentRequired = append(n.dependentRequired, dependency{name: name, needs: needs})
			continue
		}
		dep, err := k.c.compile(k.loc + "/dependencies/" + escape(name))
		if err != nil {
			k.err = err
			return
		}
		n.dependentSchemas = append(n.dependentSchemas, dependentSchema{name: name, node: dep})
	}
}

// checkAnnotations checks the keywords that never assert (core's
// bookkeeping, meta-data, format, content) as the meta-schema does.
func (c *compiler) checkAnnotations(obj map[string]any, loc string) error {
	k := keywords{c: c, obj: obj, loc: loc}
	for _, kw := range []string{"$comment", "title", "description", "format", "contentEncoding", "contentMediaType", "$id", "$ref", "$dynamicRef", "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor"} {
		if v, ok := obj[kw]; ok {
			s, isString := v.(string)
			if !isString {
				k.fail(kw, "want a string")
				continue
			}
			switch kw {
			case "$id", "$ref", "$dynamicRef", "$recursiveRef":
				if !isURIReference(s) {
					k.fail(kw, "%q is not a URI reference", s)
				}
			case "$recursiveAnchor":
				if !isAnchor(s) {
					k.fail(kw, "%q is not an anchor name", s)
				}
			}
		}
	}
	for _, kw := range []string{"deprecated", "readOnly", "writeOnly"} {
		k.boolean(kw)
	}
	if v, ok := obj["examples"]; ok {
		if _, isList := v.([]any); !isList {
			k.fail("examples", "want an array")
		}
	}
	if v, ok := obj["$schema"]; ok {
		s, _ := v.(string)
		if strings.TrimSuffix(s, "#") != Dialect {
			k.fail("$schema", "%v: wymcp supports JSON Schema 2020-12 (%s) only", v, Dialect)
		}
	}
	if v, ok := obj["$vocabulary"]; ok {
		m, isMap := v.(map[string]any)
		for uri, on := range m {
			if _, isBool := on.(bool); !isBool {
				isMap = false
			}
			if u, ok := parseURI(uri); !ok || !u.IsAbs() {
				isMap = false
			}
		}
		if !isMap {
			k.fail("$vocabulary", "want an object of URIs to booleans")
		}
	}
	return k.err
}

// isURIReference reports whether s is a URI reference, as the meta-schema's
// "uri-reference" format is checked: parseURI's, and no backslash (which
// RFC 3986 allows nowhere, and a browser reads as "/").
func isURIReference(s string) bool {
	_, ok := parseURI(s)
	return ok && !strings.Contains(s, `\`)
}

// parseURI parses a URI (reference) as net/url does, which is lenient, and
// refuses besides a host with a ":" that is not an IPv6 address in
// brackets ("//::0").
func parseURI(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	if host := u.Hostname(); strings.Contains(host, ":") {
		ip, err := netip.ParseAddr(host)
		if err != nil || ip.Zone() != "" || !strings.HasPrefix(u.Host, "[") {
			return nil, false
		}
	}
	return u, true
}
