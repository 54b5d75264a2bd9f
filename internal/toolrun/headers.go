package toolrun

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// HeaderParams returns the tool's x-mcp-header declarations, nil when none.
func (t *Tool) HeaderParams() []wire.HeaderParam { return t.headers }

// headerKeyword is the schema keyword of SEP-2243.
const headerKeyword = "x-mcp-header"

// parseHeaderParams finds and checks the x-mcp-header declarations of an
// input schema. A declaration is valid only on a property reached from the
// root through "properties" alone (not through items, combinators,
// conditionals or $ref, where no single argument value stands behind it),
// on a property typed string, integer or boolean, with a name that is a
// non-empty RFC 9110 token, unique regardless of case. Clients drop a tool
// whose declarations are invalid, so an invalid one fails the tool's
// construction instead of reaching tools/list.
func parseHeaderParams(schema []byte) ([]wire.HeaderParam, error) {
	if !strings.Contains(string(schema), headerKeyword) {
		return nil, nil
	}
	var root any
	if err := strictjson.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	w := &headerWalk{seen: map[string]bool{}}
	if err := w.walk(root, nil, false); err != nil {
		return nil, err
	}
	return w.params, nil
}

type headerWalk struct {
	params []wire.HeaderParam
	seen   map[string]bool
}

// walk visits a subschema. path is its argument path when it is reached by
// properties alone from the root (the root itself has an empty path and is
// not a property); viaOther marks a subschema reached any other way.
func (w *headerWalk) walk(node any, path []string, viaOther bool) error {
	obj, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	if decl, ok := obj[headerKeyword]; ok {
		if viaOther || len(path) == 0 {
			return fmt.Errorf("%s at %q is not on a property reached through properties alone", headerKeyword, "/"+strings.Join(path, "/"))
		}
		if err := w.declare(decl, obj, path); err != nil {
			return err
		}
	}
	for key, v := range obj {
		switch key {
		case "properties":
			props, _ := v.(map[string]any)
			for name, sub := range props {
				if err := w.walk(sub, append(slices.Clone(path), name), viaOther); err != nil {
					return err
				}
			}
		case "additionalProperties", "items", "contains", "not", "if", "then", "else",
			"propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "additionalItems":
			if err := w.walk(v, path, true); err != nil {
				return err
			}
		case "allOf", "anyOf", "oneOf", "prefixItems":
			list, _ := v.([]any)
			for _, sub := range list {
				if err := w.walk(sub, path, true); err != nil {
					return err
				}
			}
		case "$defs", "definitions", "patternProperties", "dependentSchemas":
			m, _ := v.(map[string]any)
			for _, sub := range m {
				if err := w.walk(sub, path, true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (w *headerWalk) declare(decl any, obj map[string]any, path []string) error {
	where := "/" + strings.Join(path, "/")
	name, ok := decl.(string)
	if !ok || !wire.IsToken(name) {
		return fmt.Errorf("%s at %q must be a non-empty RFC 9110 token", headerKeyword, where)
	}
	typ, _ := obj["type"].(string)
	switch typ {
	case "string", "integer", "boolean":
	default:
		return fmt.Errorf("%s at %q: the property must have type string, integer or boolean", headerKeyword, where)
	}
	lower := strings.ToLower(name)
	if w.seen[lower] {
		return fmt.Errorf("%s %q is declared twice (names are case-insensitive)", headerKeyword, name)
	}
	w.seen[lower] = true
	w.params = append(w.params, wire.HeaderParam{Name: name, Path: path, Type: typ})
	slices.SortFunc(w.params, func(a, b wire.HeaderParam) int { return strings.Compare(a.Name, b.Name) })
	return nil
}
