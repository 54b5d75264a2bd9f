package jsonschema

import "regexp"

// kinds is a set of JSON types, as the "type" keyword names them. integer
// is a number with no fractional part; a set with number includes it.
type kinds uint8

const (
	kindNull kinds = 1 << iota
	kindBoolean
	kindObject
	kindArray
	kindNumber
	kindInteger
	kindString
)

// kindNames maps the "type" names to their kinds, in the order messages
// list them.
var kindNames = []struct {
	name string
	kind kinds
}{
	{"null", kindNull}, {"boolean", kindBoolean}, {"object", kindObject}, {"array", kindArray},
	{"number", kindNumber}, {"integer", kindInteger}, {"string", kindString},
}

// node is one compiled (sub)schema. Absent keywords are zero values, except
// the counts, where -1 means absent.
type node struct {
	// never is the schema false; a true schema is a node with no keywords.
	never bool
	// owner is the schema resource the node is in: entering the node puts
	// the resource in the dynamic scope that "$dynamicRef" searches.
	owner *resource
	// uneval: the node has unevaluatedProperties or unevaluatedItems, so its
	// in-place applicators must report what they evaluated.
	uneval bool

	ref     *node
	dynRef  *node  // the static target of "$dynamicRef"
	dynName string // its anchor name when the reference is dynamic

	types    kinds // 0: no "type"
	hasConst bool
	constant any // normalized (see normalize)
	enum     []any
	hasEnum  bool

	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf *number

	minLength, maxLength int
	pattern              *regexp.Regexp

	prefixItems            []*node
	items                  *node
	contains               *node
	minContains            int // 1 when absent
	maxContains            int
	minItems, maxItems     int
	uniqueItems            bool
	unevaluatedItems       *node
	properties             map[string]*node
	propertyOrder          []string // properties' names, sorted: messages come in a fixed order
	patternProperties      []patternProperty
	additionalProperties   *node
	propertyNames          *node
	required               []string
	dependentRequired      []dependency
	dependentSchemas       []dependentSchema
	minProperties          int
	maxProperties          int
	unevaluatedProperties  *node
	allOf, anyOf, oneOf    []*node
	not, ifS, thenS, elseS *node
}

// patternProperty is one member of "patternProperties".
type patternProperty struct {
	re   *regexp.Regexp
	node *node
}

// dependency is one member of "dependentRequired" (or of "dependencies"
// with a string array): when name is present, so must be each of needs.
type dependency struct {
	name  string
	needs []string
}

// dependentSchema is one member of "dependentSchemas" (or of
// "dependencies" with a schema): when name is present, the object must
// also match node.
type dependentSchema struct {
	name string
	node *node
}

// resource is a schema resource: the document's root, or a subschema with
// "$id". Its dynamic anchors are what "$dynamicRef" looks for.
type resource struct {
	uri         string
	loc         string
	dynamicLocs map[string]string // "$dynamicAnchor" name → location, while compiling
	dynamic     map[string]*node  // the same, compiled
}
