package toolrun

import "github.com/wymcp/wymcp/internal/strictjson"

// The fast path's walk: one pass over the instance with the strict Lexer,
// checking each value against its fastNode as it is read.

// accept reports whether raw is certainly one strict JSON value that
// protocol.Unmarshal decodes and the full validator accepts. false means
// only "not sure": the caller must run the full path. It does not allocate.
//
// The strict Lexer reads raw and alone decides what is valid JSON (UTF-8,
// escapes, duplicate names, number grammar, depth); the walk below decides
// only whether each value it reads conforms to its schema node.
func (f *fastSchema) accept(raw []byte) bool {
	// The Lexer lives on this stack: arguments whose objects have the
	// names the schema knows, and few others, need no buffer, so most
	// calls touch no pool.
	var l strictjson.Lexer
	l.Reset(raw)
	ok := fastValue(&l, f.root, 0) && l.End() == nil
	l.Close()
	return ok
}

// fastValue checks the next value against n (nil: anything) and reads past
// it. depth counts the objects and arrays it is inside of.
func fastValue(l *strictjson.Lexer, n *fastNode, depth int) bool {
	if n == nil {
		n = &fastAnyNode
	}
	if n.never {
		return false
	}
	c := l.Peek()
	if c == '"' {
		// Strings are most values: checked here, without another call.
		// enum and const compare the bytes between the quotes, so they
		// need a string without escapes; the length is counted in code
		// points, as the full validator counts it. Every string with an escaped
		// surrogate pair takes the full path.
		if n.types&fastString == 0 {
			return false
		}
		v, esc, err := l.String()
		if err != nil || esc.Pair() {
			return false
		}
		if n.hasEnum || n.hasConst {
			if esc.Any() || n.hasConst && string(v) != n.constant || n.hasEnum && !fastContains(n.enum, v) {
				return false
			}
		}
		return n.minLen == 0 && n.maxLen < 0 || fastLength(v, esc, n)
	}
	// enum and const hold only strings: no other value can match them.
	if n.hasEnum || n.hasConst {
		return false
	}
	switch c {
	case '{':
		return n.types&fastObject != 0 && depth < fastMaxDepth && fastObjectValue(l, n, depth+1)
	case '[':
		return n.types&fastArray != 0 && depth < fastMaxDepth && fastArrayValue(l, n, depth+1)
	case 't', 'f':
		return n.types&fastBoolean != 0 && l.Skip() == nil
	case 'n':
		return n.types&fastNull != 0 && l.Skip() == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return fastNumberValue(l, n)
	}
	return false
}

// fastLength checks the string whose bytes between the quotes are v
// against n's minLength and maxLength.
func fastLength(v []byte, esc strictjson.Escapes, n *fastNode) bool {
	runes := strictjson.RuneCount(v, esc)
	return runes >= n.minLen && (n.maxLen < 0 || runes <= n.maxLen)
}

// fastContains reports whether v is one of list. Go does not allocate for
// string(v) in the comparison.
func fastContains(list []string, v []byte) bool {
	for _, e := range list {
		if e == string(v) {
			return true
		}
	}
	return false
}

// fastNumberValue checks a number against n. A type of "integer" without
// "number", and the bounds, need the exact value: only a plain integer of
// at most fastMaxPlain digits gives it.
func fastNumberValue(l *strictjson.Lexer, n *fastNode) bool {
	text, err := l.Number()
	if err != nil {
		return false
	}
	v, plain, ok := fastNumberText(text)
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

// fastNumberText reads text, a number the Lexer accepted, for what the fast
// path may vouch for: ok reports a magnitude goccy can decode (see
// fastMaxMantissa), and plain an integer without fraction or exponent of at
// most fastMaxPlain digits, whose value is v.
func fastNumberText(text []byte) (v int64, plain, ok bool) {
	i := 0
	neg := text[0] == '-'
	if neg {
		i++
	}
	start := i
	// The integer part, and its value while it may be exact (it is used
	// only then, so an overflow past fastMaxPlain digits does no harm).
	var u uint64
	for ; i < len(text) && '0' <= text[i] && text[i] <= '9'; i++ {
		u = u*10 + uint64(text[i]-'0')
	}
	intEnd := i
	mantissa := intEnd - start
	plain = true
	if i < len(text) && text[i] == '.' {
		plain = false
		f := i + 1
		i = fastDigits(text, f)
		mantissa += i - f
	}
	if i < len(text) { // 'e' or 'E', an optional sign, digits
		plain = false
		i++
		if text[i] == '+' || text[i] == '-' {
			i++
		}
		exp := 0
		for _, c := range text[i:] {
			if exp = exp*10 + int(c-'0'); exp > fastMaxExponent {
				return 0, false, false
			}
		}
	}
	if mantissa > fastMaxMantissa {
		return 0, false, false
	}
	if !plain || mantissa > fastMaxPlain {
		return 0, false, true
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, true, true
}

// fastDigits returns the index of the first byte at or after i that is not
// an ASCII digit.
func fastDigits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// fastObjectValue checks an object against n's object keywords. The Lexer
// refuses a repeated name, and finds each name among n's (n.dict), whose
// index is its bit for "required". A name with escapes, and an object with
// more than fastMaxExtra names n does not know, take the full path.
func fastObjectValue(l *strictjson.Lexer, n *fastNode, depth int) bool {
	var o strictjson.Object
	if l.OpenObject(&o, n.dict) != nil {
		return false
	}
	var seen uint64
	extras := 0
	for {
		_, more, err := l.Member(&o)
		if err != nil || more && o.Escaped() {
			return false
		}
		if !more {
			return seen&n.required == n.required
		}
		child := n.additional
		if i := o.Index(); i >= 0 {
			seen |= 1 << i
			if f := &n.names[i]; f.property {
				child = f.node
			}
		} else {
			if child != nil && child.never {
				return false // additionalProperties: false
			}
			if extras == fastMaxExtra {
				return false
			}
			extras++
		}
		if !fastValue(l, child, depth) {
			return false
		}
	}
}

// fastArrayValue checks an array against n's array keywords.
func fastArrayValue(l *strictjson.Lexer, n *fastNode, depth int) bool {
	var a strictjson.Array
	if l.OpenArray(&a) != nil {
		return false
	}
	count := 0
	for {
		more, err := l.Element(&a)
		if err != nil {
			return false
		}
		if !more {
			return count >= n.minItems
		}
		if !fastValue(l, n.items, depth) {
			return false
		}
		count++
		if n.maxItems >= 0 && count > n.maxItems {
			return false
		}
	}
}
