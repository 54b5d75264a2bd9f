package jsonschema

// The keywords that apply other schemas to the same value (allOf, anyOf,
// oneOf, not, if/then/else, dependentSchemas) and the annotations that
// unevaluatedProperties and unevaluatedItems read from them.

import "strconv"

// evaluated is what a schema's keywords evaluated of one instance value:
// the annotations "unevaluatedProperties" and "unevaluatedItems" read.
type evaluated struct {
	props    map[string]bool
	items    int // items [0, items) were evaluated
	allItems bool
	indexes  map[int]bool // items "contains" matched
}

func (e *evaluated) merge(o *evaluated) {
	if e == nil || o == nil {
		return
	}
	for p := range o.props {
		e.prop(p)
	}
	e.items = max(e.items, o.items)
	e.allItems = e.allItems || o.allItems
	for i := range o.indexes {
		if e.indexes == nil {
			e.indexes = map[int]bool{}
		}
		e.indexes[i] = true
	}
}

func (e *evaluated) prop(name string) {
	if e.props == nil {
		e.props = map[string]bool{}
	}
	e.props[name] = true
}

// fresh returns an empty record when one is wanted, else nil.
func fresh(want bool) *evaluated {
	if want {
		return &evaluated{}
	}
	return nil
}

// applicators applies the keywords that apply other schemas to the same
// value: allOf, anyOf, oneOf, not, if/then/else, dependentSchemas.
func (v *validator) applicators(n *node, inst any, ev *evaluated, chain *applied) bool {
	ok := true
	for _, sub := range n.allOf {
		if !v.node(sub, inst, ev, chain) {
			if ok = false; v.stop(ev) {
				return false
			}
		}
	}
	if len(n.anyOf) > 0 && !v.anyOf(n.anyOf, inst, ev, chain) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if len(n.oneOf) > 0 && !v.oneOf(n.oneOf, inst, ev, chain) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	if n.not != nil {
		v.quiet++
		matched := v.node(n.not, inst, nil, chain)
		v.quiet--
		if matched {
			ok = false
			v.fail("must not match the 'not' schema")
		}
	}
	if n.ifS != nil {
		cond := fresh(ev != nil)
		v.quiet++
		matched := v.node(n.ifS, inst, cond, chain)
		v.quiet--
		branch := n.elseS
		if matched {
			ev.merge(cond)
			branch = n.thenS
		}
		if branch != nil && !v.node(branch, inst, ev, chain) {
			ok = false
		}
	}
	if obj, isObj := inst.(map[string]any); isObj {
		for _, d := range n.dependentSchemas {
			if _, present := obj[d.name]; present && !v.node(d.node, inst, ev, chain) {
				if ok = false; v.stop(ev) {
					return false
				}
			}
		}
	}
	return ok
}

// anyOf needs one match; with annotations wanted, every branch is tried,
// since each that matches evaluates something. The reasons, when none
// matches, are every branch's.
func (v *validator) anyOf(list []*node, inst any, ev *evaluated, chain *applied) bool {
	matched := false
	v.quiet++
	for _, sub := range list {
		got := fresh(ev != nil)
		if v.node(sub, inst, got, chain) {
			matched = true
			ev.merge(got)
			if ev == nil {
				break
			}
		}
	}
	v.quiet--
	if !matched {
		for _, sub := range list {
			v.node(sub, inst, nil, chain)
		}
	}
	return matched
}

// oneOf needs exactly one match.
func (v *validator) oneOf(list []*node, inst any, ev *evaluated, chain *applied) bool {
	first, second := -1, -1
	var got *evaluated
	v.quiet++
	for i, sub := range list {
		e := fresh(ev != nil)
		if v.node(sub, inst, e, chain) {
			if first < 0 {
				first, got = i, e
			} else {
				second = i
				break
			}
		}
	}
	v.quiet--
	switch {
	case first < 0:
		for _, sub := range list {
			v.node(sub, inst, nil, chain)
		}
		return false
	case second >= 0:
		v.fail("matches 'oneOf' schemas " + strconv.Itoa(first) + " and " + strconv.Itoa(second) + ", want exactly one")
		return false
	}
	ev.merge(got)
	return true
}

// unevaluated applies "unevaluatedItems" and "unevaluatedProperties" to
// what no other keyword of n (nor the schemas it applied in place)
// evaluated.
func (v *validator) unevaluated(n *node, inst any, ev *evaluated) bool {
	ok := true
	switch x := inst.(type) {
	case []any:
		if n.unevaluatedItems == nil || ev.allItems {
			break
		}
		for i := ev.items; i < len(x); i++ {
			if ev.indexes[i] {
				continue
			}
			if !v.child(n.unevaluatedItems, x[i], strconv.Itoa(i)) {
				if ok = false; v.stop(nil) {
					return false
				}
			}
		}
		ev.allItems = true
	case map[string]any:
		if n.unevaluatedProperties == nil {
			break
		}
		var extra []string
		for _, name := range sortedNames(x) {
			if ev.props[name] {
				continue
			}
			if n.unevaluatedProperties.never {
				extra = append(extra, name)
			} else if !v.child(n.unevaluatedProperties, x[name], name) {
				if ok = false; v.stop(nil) {
					return false
				}
			}
		}
		for name := range x {
			ev.prop(name) // every member is evaluated now
		}
		if len(extra) > 0 {
			ok = false
			v.fail("unevaluated " + names(extra, "property", "properties") + " not allowed")
		}
	}
	return ok
}
