package jsonschema

import "strings"

// Failure is one reason an instance is invalid: where, as an RFC 6901 JSON
// pointer into the instance, and what.
type Failure struct {
	Path    string
	Message string
}

// maxFailures bounds the failures one validation reports, so that an
// argument with a million bad items costs no more than a few.
const maxFailures = 64

// Validate validates an instance decoded as strictjson.Unmarshal decodes
// into any (numbers as float64). It returns nil when the instance is valid,
// else every failing leaf (up to 64) in a fixed order.
//
// A valid instance is seen once, quietly: no path is kept, no message made,
// no member names sorted. Only an invalid one is walked again for reasons.
func (s *Schema) Validate(instance any) []Failure {
	if s.Valid(instance) {
		return nil
	}
	var v validator
	if v.node(s.root, instance, nil, nil) {
		return nil // cannot happen: the quiet walk said otherwise
	}
	if len(v.failures) == 0 { // cannot happen: every false answer says why
		return []Failure{{Path: "", Message: "invalid"}}
	}
	return v.failures
}

// Valid reports whether the instance is valid, without the reasons.
func (s *Schema) Valid(instance any) bool {
	v := validator{quiet: 1}
	return v.node(s.root, instance, nil, nil)
}

// validator is one validation's state.
type validator struct {
	path     []string    // the instance location, token by token
	scope    []*resource // the dynamic scope, outermost first
	failures []Failure
	// quiet > 0: only the answer matters (inside "not", "if", a first
	// pass over "anyOf"...), so nothing is written and the first failure
	// ends a schema's evaluation.
	quiet int
}

func (v *validator) fail(msg string) {
	if v.quiet > 0 || len(v.failures) >= maxFailures {
		return
	}
	v.failures = append(v.failures, Failure{Path: pointer(v.path), Message: msg})
}

// stop reports whether to end a schema's evaluation at its first failure:
// when nobody reads the reasons nor the annotations.
func (v *validator) stop(ev *evaluated) bool { return v.quiet > 0 && ev == nil }

// applied is the chain of schemas being applied in place to one instance
// value, innermost first; nil before the first. It lives on the call stack.
type applied struct {
	n     *node
	outer *applied
}

// node validates inst against n. ev, when not nil, collects what n
// evaluated; the caller discards it when node returns false. chain holds
// the schemas already applied to this same value: n among them is a
// reference cycle ({"$ref": "#"}, an anyOf of two), answered as a failure
// at once, neither recursing forever nor trying every path through it.
func (v *validator) node(n *node, inst any, ev *evaluated, chain *applied) bool {
	if n.never {
		v.fail("no value is allowed here")
		return false
	}
	for a := chain; a != nil; a = a.outer {
		if a.n == n {
			v.fail("the schema refers to itself without reaching a value (a reference cycle)")
			return false
		}
	}
	here := applied{n: n, outer: chain}
	if len(v.scope) > 0 && v.scope[len(v.scope)-1] == n.owner {
		return v.keywords(n, inst, ev, &here)
	}
	v.scope = append(v.scope, n.owner)
	ok := v.keywords(n, inst, ev, &here)
	v.scope = v.scope[:len(v.scope)-1]
	return ok
}

// keywords applies n's keywords; see node.
func (v *validator) keywords(n *node, inst any, ev *evaluated, chain *applied) bool {
	// A schema with unevaluated* reads only what its own keywords and
	// in-place subschemas evaluated, so it keeps its own record and hands
	// it up when it passes.
	outer := ev
	if n.uneval {
		ev = &evaluated{}
	}
	ok := true
	if n.ref != nil && !v.node(n.ref, inst, ev, chain) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if n.dynRef != nil && !v.node(v.dynamicTarget(n), inst, ev, chain) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if !v.generic(n, inst) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	var kindOK bool
	switch x := inst.(type) {
	case float64:
		kindOK = v.numberKeywords(n, x)
	case string:
		kindOK = v.stringKeywords(n, x)
	case []any:
		kindOK = v.arrayKeywords(n, x, ev)
	case map[string]any:
		kindOK = v.objectKeywords(n, x, ev)
	default:
		kindOK = true
	}
	if !kindOK {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if !v.applicators(n, inst, ev, chain) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if n.uneval {
		if !v.unevaluated(n, inst, ev) {
			return false
		}
		if ok {
			outer.merge(ev)
		}
	}
	return ok
}

// dynamicTarget resolves a "$dynamicRef": to the outermost resource in the
// dynamic scope that has a "$dynamicAnchor" of its name, else statically.
func (v *validator) dynamicTarget(n *node) *node {
	if n.dynName != "" {
		for _, r := range v.scope {
			if t := r.dynamic[n.dynName]; t != nil {
				return t
			}
		}
	}
	return n.dynRef
}

// child validates a member or item of the current value, at its location.
func (v *validator) child(n *node, inst any, token string) bool {
	if v.quiet > 0 {
		return v.node(n, inst, nil, nil) // the path is only for messages
	}
	v.path = append(v.path, token)
	ok := v.node(n, inst, nil, nil)
	v.path = v.path[:len(v.path)-1]
	return ok
}

// pointer renders an instance location as an RFC 6901 JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}
