package jsonschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// BaseURI is the URI a document is compiled under. It names nothing that
// can be loaded: a relative reference resolves against it to another
// wymcp: URI, which is refused like any URL outside the document. It is
// hierarchical on purpose, so that "other.json" resolves to a different URI
// rather than to the document itself.
const BaseURI = "wymcp:///schema.json"

// Dialect is the one "$schema" accepted (with or without an empty "#").
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Schema is a compiled schema document. It is immutable and safe for
// concurrent use.
type Schema struct {
	root *node
}

// Compile compiles a schema document (see [Decode]). Every schema in it,
// used or not, must be valid under the 2020-12 meta-schema, and every
// reference must resolve within it.
func Compile(raw []byte) (*Schema, error) {
	doc, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return CompileValue(doc)
}

// CompileValue compiles a decoded document (see [Decode]).
func CompileValue(doc any) (*Schema, error) {
	c := &compiler{
		doc:       doc,
		nodes:     map[string]*node{},
		resources: map[string]*resource{},
		anchors:   map[string]string{},
		bases:     map[string]string{},
		owners:    map[string]*resource{},
	}
	root := &resource{uri: BaseURI, loc: ""}
	c.resources[BaseURI] = root
	if err := c.walk(doc, "", BaseURI, root); err != nil {
		return nil, err
	}
	n, err := c.compile("")
	if err != nil {
		return nil, err
	}
	for _, r := range c.resources {
		if len(r.dynamicLocs) > 0 && r.dynamic == nil {
			r.dynamic = make(map[string]*node, len(r.dynamicLocs))
			for name, loc := range r.dynamicLocs {
				if r.dynamic[name], err = c.compile(loc); err != nil {
					return nil, err
				}
			}
		}
	}
	return &Schema{root: n}, nil
}

// compiler holds one document while it compiles. Locations are JSON
// pointers into the document ("" is the root).
type compiler struct {
	doc       any
	nodes     map[string]*node     // compiled, by location
	resources map[string]*resource // by absolute URI without fragment
	anchors   map[string]string    // "uri#name" → location
	bases     map[string]string    // each schema's base URI, by location
	owners    map[string]*resource // each schema's resource, by location
}

// schemaKeywords are the keywords whose value is a schema, an array of
// schemas, or an object of schemas: where the walk and the compiler go
// down. ("definitions" and "dependencies" are the 2020-12 meta-schema's
// deprecated spellings, still checked there.)
var (
	oneSchema    = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaArrays = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMaps   = []string{"$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies"}
)

// walk finds, before anything compiles, every schema's base URI and the
// resources and anchors a reference may name.
func (c *compiler) walk(v any, loc, base string, owner *resource) error {
	obj, ok := v.(map[string]any)
	if !ok {
		c.bases[loc], c.owners[loc] = base, owner
		return nil
	}
	// An empty "$id" ("" or "#") names the resource it is in: no new one.
	if id, ok := obj["$id"].(string); ok && strings.TrimSuffix(id, "#") != "" {
		u, err := resolve(base, id)
		if err != nil {
			return c.errorf(loc, "$id", "%v", err)
		}
		if u.Fragment != "" {
			return c.errorf(loc, "$id", "%q is not a URI reference without a fragment", id)
		}
		u.Fragment, u.RawFragment = "", ""
		base = u.String()
		if _, dup := c.resources[base]; dup && loc != "" {
			return c.errorf(loc, "$id", "%q is the $id of another schema in the document", id)
		}
		if loc == "" {
			owner.uri = base // the root answers to both names
			c.resources[base] = owner
		} else {
			owner = &resource{uri: base, loc: loc}
			c.resources[base] = owner
		}
	}
	c.bases[loc], c.owners[loc] = base, owner
	for _, kw := range []string{"$anchor", "$dynamicAnchor"} {
		name, ok := obj[kw].(string)
		if !ok {
			continue
		}
		if !isAnchor(name) {
			return c.errorf(loc, kw, "%q is not an anchor name", name)
		}
		key := base + "#" + name
		if other, dup := c.anchors[key]; dup && other != loc {
			return c.errorf(loc, kw, "anchor %q is defined twice in one resource", name)
		}
		c.anchors[key] = loc
		if kw == "$dynamicAnchor" {
			if owner.dynamicLocs == nil {
				owner.dynamicLocs = map[string]string{}
			}
			owner.dynamicLocs[name] = loc
		}
	}
	for _, kw := range oneSchema {
		if sub, ok := obj[kw]; ok {
			if err := c.walk(sub, loc+"/"+escape(kw), base, owner); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaArrays {
		if list, ok := obj[kw].([]any); ok {
			for i, sub := range list {
				if err := c.walk(sub, loc+"/"+kw+"/"+strconv.Itoa(i), base, owner); err != nil {
					return err
				}
			}
		}
	}
	for _, kw := range schemaMaps {
		m, ok := obj[kw].(map[string]any)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if _, strings := m[name].([]any); kw == "dependencies" && strings {
				continue
			}
			if err := c.walk(m[name], loc+"/"+escape(kw)+"/"+escape(name), base, owner); err != nil {
				return err
			}
		}
	}
	return nil
}

// compile compiles the schema at loc, once: a reference cycle finds the
// node it is filling.
func (c *compiler) compile(loc string) (*node, error) {
	if n, ok := c.nodes[loc]; ok {
		return n, nil
	}
	v, ok := c.lookup(loc)
	if !ok {
		return nil, fmt.Errorf("schema: nothing at %q in the document", "#"+loc)
	}
	// Counts are -1 when absent: a true schema, like {}, bounds nothing.
	n := &node{
		owner:     c.ownerOf(loc),
		minLength: -1, maxLength: -1, minItems: -1, maxItems: -1,
		minProperties: -1, maxProperties: -1, minContains: 1, maxContains: -1,
	}
	c.nodes[loc] = n
	switch v := v.(type) {
	case bool:
		n.never = !v
		return n, nil
	case map[string]any:
		return n, c.fill(n, v, loc)
	}
	return nil, fmt.Errorf("schema at %q: a schema is an object or a boolean, not %s", "#"+loc, kindOf(v))
}

// ownerOf and baseOf answer for any location, also one that a JSON pointer
// reaches outside the places the walk visited: the nearest enclosing
// schema's.
func (c *compiler) ownerOf(loc string) *resource {
	for {
		if r, ok := c.owners[loc]; ok {
			return r
		}
		loc = loc[:strings.LastIndexByte(loc, '/')]
	}
}

func (c *compiler) baseOf(loc string) string {
	for {
		if b, ok := c.bases[loc]; ok {
			return b
		}
		loc = loc[:strings.LastIndexByte(loc, '/')]
	}
}

// lookup evaluates a JSON pointer in the document. It is RFC 6901's, no
// looser: "~" is only ever "~0" or "~1", and an array index is "0" or
// digits without a leading zero (not "00", "+1" nor "-0"), so that one
// location has one spelling and a reference finds the node compiled there.
func (c *compiler) lookup(loc string) (any, bool) {
	v := c.doc
	if loc == "" {
		return v, true
	}
	if loc[0] != '/' {
		return nil, false
	}
	for _, tok := range strings.Split(loc[1:], "/") {
		tok, ok := unescape(tok)
		if !ok {
			return nil, false
		}
		switch cur := v.(type) {
		case map[string]any:
			if v, ok = cur[tok]; !ok {
				return nil, false
			}
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(cur) {
				return nil, false
			}
			v = cur[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// unescape decodes a JSON pointer token; false for a "~" followed by
// anything but "0" or "1".
func unescape(tok string) (string, bool) {
	if !strings.Contains(tok, "~") {
		return tok, true
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '~' {
			b.WriteByte(tok[i])
			continue
		}
		if i++; i == len(tok) || (tok[i] != '0' && tok[i] != '1') {
			return "", false
		}
		b.WriteByte("~/"[tok[i]-'0'])
	}
	return b.String(), true
}

// arrayIndex reads a JSON pointer token as an array index.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for _, r := range tok {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

// errorf makes a compile error naming the keyword and where it is.
func (c *compiler) errorf(loc, keyword, format string, args ...any) error {
	return fmt.Errorf("schema at %q: %s: %s", "#"+loc+"/"+escape(keyword), keyword, fmt.Sprintf(format, args...))
}

// escape escapes a JSON pointer token.
func escape(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// resolve resolves a URI reference against a base. Against a base with no
// hierarchy ("urn:example:a", opaque to net/url) it resolves a fragment
// only: RFC 3986 makes "b" into "urn:b" there, net/url into "urn:///b"
// (golang/go#66084) and santhosh into the base itself. No schema needs one
// of the three, so a reference that would tell them apart is refused.
func resolve(base, ref string) (*url.URL, error) {
	b, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	r, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URI reference", ref)
	}
	if b.Opaque != "" && !r.IsAbs() && (r.Host != "" || r.Path != "" || r.RawQuery != "" || r.ForceQuery) {
		return nil, fmt.Errorf("%q cannot be resolved against %q, which has no hierarchy", ref, base)
	}
	return b.ResolveReference(r), nil
}

// isAnchor reports whether s is a plain-name anchor: ^[A-Za-z_][-A-Za-z0-9._]*$.
func isAnchor(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// kindOf names a decoded value's JSON type.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
