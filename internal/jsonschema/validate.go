package jsonschema

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

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

// generic applies "type", "const" and "enum".
func (v *validator) generic(n *node, inst any) bool {
	ok := true
	if n.types != 0 && !hasKind(n.types, inst) {
		ok = false
		v.fail("got " + kindOf(inst) + ", want " + kindList(n.types))
	}
	if n.hasConst && !equal(inst, n.constant) {
		ok = false
		v.fail("want the value " + show(n.constant))
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum, func(e any) bool { return equal(inst, e) }) {
		ok = false
		v.fail("want one of " + showList(n.enum))
	}
	return ok
}

func hasKind(ks kinds, inst any) bool {
	switch x := inst.(type) {
	case nil:
		return ks&kindNull != 0
	case bool:
		return ks&kindBoolean != 0
	case string:
		return ks&kindString != 0
	case []any:
		return ks&kindArray != 0
	case map[string]any:
		return ks&kindObject != 0
	case float64:
		return ks&kindNumber != 0 || ks&kindInteger != 0 && isInteger(x)
	}
	return false
}

func (v *validator) numberKeywords(n *node, x float64) bool {
	ok := true
	check := func(b *number, bad func(int) bool, want string) {
		if b != nil && bad(b.cmp(x)) {
			ok = false
			v.fail("got " + formatNumber(x) + ", want " + want + " " + b.text)
		}
	}
	check(n.minimum, func(c int) bool { return c < 0 }, "at least")
	check(n.maximum, func(c int) bool { return c > 0 }, "at most")
	check(n.exclusiveMinimum, func(c int) bool { return c <= 0 }, "more than")
	check(n.exclusiveMaximum, func(c int) bool { return c >= 0 }, "less than")
	if n.multipleOf != nil && !n.multipleOf.divides(x) {
		ok = false
		v.fail("got " + formatNumber(x) + ", want a multiple of " + n.multipleOf.text)
	}
	return ok
}

func (v *validator) stringKeywords(n *node, s string) bool {
	ok := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		runes := utf8Count(s)
		if n.minLength >= 0 && runes < n.minLength {
			ok = false
			v.fail("got " + plural(runes, "character") + ", want at least " + strconv.Itoa(n.minLength))
		}
		if n.maxLength >= 0 && runes > n.maxLength {
			ok = false
			v.fail("got " + plural(runes, "character") + ", want at most " + strconv.Itoa(n.maxLength))
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		ok = false
		v.fail("does not match the pattern " + strconv.Quote(n.pattern.String()))
	}
	return ok
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

func (v *validator) arrayKeywords(n *node, arr []any, ev *evaluated) bool {
	ok := true
	if n.minItems >= 0 && len(arr) < n.minItems {
		ok = false
		v.fail("got " + plural(len(arr), "item") + ", want at least " + strconv.Itoa(n.minItems))
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		ok = false
		v.fail("got " + plural(len(arr), "item") + ", want at most " + strconv.Itoa(n.maxItems))
	}
	if n.uniqueItems {
		if i, j, dup := duplicate(arr); dup {
			ok = false
			v.fail("items " + strconv.Itoa(i) + " and " + strconv.Itoa(j) + " are equal, want unique items")
		}
	}
	if !ok && v.stop(ev) {
		return false
	}
	for i, sub := range n.prefixItems {
		if i >= len(arr) {
			break
		}
		if !v.child(sub, arr[i], strconv.Itoa(i)) {
			if ok = false; v.stop(ev) {
				return false
			}
		}
	}
	if ev != nil {
		ev.items = max(ev.items, min(len(n.prefixItems), len(arr)))
	}
	if n.items != nil && len(arr) > len(n.prefixItems) {
		for i := len(n.prefixItems); i < len(arr); i++ {
			if !v.child(n.items, arr[i], strconv.Itoa(i)) {
				if ok = false; v.stop(ev) {
					return false
				}
			}
		}
		if ev != nil {
			ev.allItems = true
		}
	}
	if n.contains != nil {
		matched := 0
		v.quiet++
		for i, item := range arr {
			if v.child(n.contains, item, strconv.Itoa(i)) {
				matched++
				if ev != nil {
					if ev.indexes == nil {
						ev.indexes = map[int]bool{}
					}
					ev.indexes[i] = true
				}
			}
		}
		v.quiet--
		switch {
		case n.minContains == 1 && matched == 0:
			ok = false
			v.fail("no item matches the 'contains' schema")
		case matched < n.minContains:
			ok = false
			v.fail(containsMatched(matched) + ", want at least " + strconv.Itoa(n.minContains))
		case n.maxContains >= 0 && matched > n.maxContains:
			ok = false
			v.fail(containsMatched(matched) + ", want at most " + strconv.Itoa(n.maxContains))
		}
	}
	return ok
}

func (v *validator) objectKeywords(n *node, obj map[string]any, ev *evaluated) bool {
	ok := true
	if n.minProperties >= 0 && len(obj) < n.minProperties {
		ok = false
		v.fail("got " + plural(len(obj), "property") + ", want at least " + strconv.Itoa(n.minProperties))
	}
	if n.maxProperties >= 0 && len(obj) > n.maxProperties {
		ok = false
		v.fail("got " + plural(len(obj), "property") + ", want at most " + strconv.Itoa(n.maxProperties))
	}
	if missing := missingNames(obj, n.required); len(missing) > 0 {
		ok = false
		v.fail("missing " + names(missing, "property", "properties"))
	}
	for _, d := range n.dependentRequired {
		if _, present := obj[d.name]; !present {
			continue
		}
		if missing := missingNames(obj, d.needs); len(missing) > 0 {
			ok = false
			v.fail("missing " + names(missing, "property", "properties") + ", which '" + d.name + "' requires")
		}
	}
	if !ok && v.stop(ev) {
		return false
	}
	for _, name := range n.propertyOrder {
		val, present := obj[name]
		if !present {
			continue
		}
		if ev != nil {
			ev.prop(name)
		}
		if !v.child(n.properties[name], val, name) {
			if ok = false; v.stop(ev) {
				return false
			}
		}
	}
	if len(n.patternProperties) == 0 && n.additionalProperties == nil && n.propertyNames == nil {
		return ok
	}
	// Members are visited in name order when failures are written, so
	// that they come in a fixed order; as the map gives them otherwise,
	// which costs nothing.
	var extra []string
	if v.quiet > 0 {
		for name, val := range obj {
			if !v.member(n, name, val, ev, &extra) {
				if ok = false; v.stop(ev) {
					return false
				}
			}
		}
	} else {
		for _, name := range sortedNames(obj) {
			if !v.member(n, name, obj[name], ev, &extra) {
				ok = false
			}
		}
	}
	if len(extra) > 0 {
		ok = false
		v.fail("additional " + names(extra, "property", "properties") + " not allowed")
	}
	return ok
}

// member applies propertyNames, patternProperties and additionalProperties
// to one member. A name that additionalProperties false refuses goes into
// extra, for one message that lists them all.
func (v *validator) member(n *node, name string, val any, ev *evaluated, extra *[]string) bool {
	ok := true
	if n.propertyNames != nil && !v.propertyName(n.propertyNames, name) {
		if ok = false; v.stop(ev) {
			return false
		}
	}
	matched := false
	for _, pp := range n.patternProperties {
		if !pp.re.MatchString(name) {
			continue
		}
		matched = true
		if ev != nil {
			ev.prop(name)
		}
		if !v.child(pp.node, val, name) {
			if ok = false; v.stop(ev) {
				return false
			}
		}
	}
	if n.additionalProperties == nil || matched {
		return ok
	}
	if _, known := n.properties[name]; known {
		return ok
	}
	if ev != nil {
		ev.prop(name)
	}
	switch {
	case n.additionalProperties.never:
		*extra = append(*extra, name)
		return false
	case !v.child(n.additionalProperties, val, name):
		return false
	}
	return ok
}

// propertyName validates a member's name against "propertyNames"; the
// failures are the name's, said at the object.
func (v *validator) propertyName(n *node, name string) bool {
	if v.quiet > 0 {
		return v.node(n, name, nil, nil)
	}
	sub := validator{scope: v.scope}
	if sub.node(n, name, nil, nil) {
		return true
	}
	for _, f := range sub.failures {
		v.fail("property name '" + name + "': " + f.Message)
	}
	return false
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
		for _, name := range sortedNames(x) {
			ev.prop(name)
		}
		if len(extra) > 0 {
			ok = false
			v.fail("unevaluated " + names(extra, "property", "properties") + " not allowed")
		}
	}
	return ok
}

func sortedNames(obj map[string]any) []string {
	return slices.Sorted(maps.Keys(obj))
}

func missingNames(obj map[string]any, required []string) []string {
	var missing []string
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			missing = append(missing, name)
		}
	}
	return missing
}

// duplicate finds the first two equal items, in one pass over a map of
// their canonical keys (a pairwise comparison would let a long array
// cost quadratic time).
func duplicate(arr []any) (int, int, bool) {
	if len(arr) <= 16 { // pairwise, without allocating
		for j := 1; j < len(arr); j++ {
			for i := range j {
				if equal(arr[i], arr[j]) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(arr))
	var key []byte
	for j, item := range arr {
		key = appendKey(key[:0], item)
		if i, dup := seen[string(key)]; dup {
			return i, j, true
		}
		seen[string(key)] = j
	}
	return 0, 0, false
}

// appendKey appends a canonical form of an instance value: equal values
// (as equal defines it) have equal keys. Object members are sorted; a
// number is its shortest decimal form, which is one per float64 value
// (but -0, which equals 0).
func appendKey(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, 'n')
	case bool:
		if v {
			return append(b, 't')
		}
		return append(b, 'f')
	case float64:
		if v == 0 {
			v = 0 // -0 is 0
		}
		return strconv.AppendFloat(append(b, 'd'), v, 'g', -1, 64)
	case string:
		return strconv.AppendQuote(append(b, 's'), v)
	case []any:
		b = append(b, '[')
		for _, e := range v {
			b = append(appendKey(b, e), ',')
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for _, k := range sortedNames(v) {
			b = strconv.AppendQuote(b, k)
			b = append(appendKey(append(b, ':'), v[k]), ',')
		}
		return append(b, '}')
	}
	return append(b, '?')
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
