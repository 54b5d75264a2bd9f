package jsonschema

// The keywords that look at one instance value by its type: type, const,
// enum, then those of numbers, strings, arrays and objects.

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

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
		v.fail("want one of " + show(n.enum))
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

// count applies a pair of bounds on a count (minLength and maxLength,
// minItems and maxItems, minProperties and maxProperties); -1 is no bound.
func (v *validator) count(got int, noun string, least, most int) bool {
	ok := true
	if least >= 0 && got < least {
		ok = false
		v.fail("got " + plural(got, noun) + ", want at least " + strconv.Itoa(least))
	}
	if most >= 0 && got > most {
		ok = false
		v.fail("got " + plural(got, noun) + ", want at most " + strconv.Itoa(most))
	}
	return ok
}

func (v *validator) stringKeywords(n *node, s string) bool {
	ok := true
	// Runes are counted only when a bound asks: counting reads the string.
	if (n.minLength >= 0 || n.maxLength >= 0) && !v.count(utf8.RuneCountInString(s), "character", n.minLength, n.maxLength) {
		ok = false
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		ok = false
		v.fail("does not match the pattern " + strconv.Quote(n.pattern.String()))
	}
	return ok
}

func (v *validator) arrayKeywords(n *node, arr []any, ev *evaluated) bool {
	ok := v.count(len(arr), "item", n.minItems, n.maxItems)
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
	ok := v.count(len(obj), "property", n.minProperties, n.maxProperties)
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
