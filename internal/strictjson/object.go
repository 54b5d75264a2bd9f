package strictjson

import "math"

// Objects and arrays the caller reads itself. OpenObject and OpenArray set
// the state of the container, an Object or an Array, which the caller
// holds in its own frame and hands to Member or Element for each member or
// element: the caller's recursion is the container stack, and the Lexer
// keeps only the depth.

// Object is an object being read with Member, from OpenObject until Member
// reads its '}'.
type Object struct {
	frame objectFrame
	names *Names
	seen  uint64 // a bit for each name of names read so far
	index int    // the index in names of the last member's name, or -1
	// started is set once a member was read: the next needs a comma.
	started bool
	escaped bool // the last member's name had escapes
	// The first names not in names (up to inlineNames of them, unescaped,
	// in a body whose offsets fit 32 bits) are kept here rather than in
	// the Lexer's buffers, so that a small map needs none either. Past
	// them, spilled is set and they are in Lexer.names from frame.first.
	spilled bool
	n       uint8
	inline  [inlineNames]inlineName
}

// inlineNames is how many names not in its Names an Object keeps itself.
const inlineNames = 8

// inlineName is a name an Object keeps: a range of the body, and its tag.
type inlineName struct{ start, end, tag uint32 }

// Index returns the index in the object's Names of the name the last
// Member returned, or -1 if the name is not among them.
func (o *Object) Index() int { return o.index }

// Escaped reports whether the name the last Member returned had escapes in
// the body.
func (o *Object) Escaped() bool { return o.escaped }

// OpenObject reads the '{' of an object whose members the caller reads with
// Member, and sets o, the caller's, to its state. names (nil for none) are
// the names the caller expects it to have (see Names).
func (l *Lexer) OpenObject(o *Object, names *Names) error {
	if l.Peek() != '{' || !l.deeper() {
		return ErrSyntax
	}
	l.pos++
	// Field by field: the inline names need no clearing, n says how many
	// of them are in use.
	o.frame = objectFrame{first: len(l.names), scratch: len(l.scratch)}
	o.names, o.seen, o.index = names, 0, -1
	o.started, o.escaped, o.spilled, o.n = false, false, false, 0
	return nil
}

// Member reads up to the value of the next member of o, the innermost open
// container: the comma before it, its name and the colon after the name.
// It returns the name by meaning (unescaped), valid until the Lexer reads
// another name; o.Index and o.Escaped tell more about it. The caller then
// reads or skips the value. At the end of the object Member reads the '}'
// and returns ok false.
func (l *Lexer) Member(o *Object) (name []byte, ok bool, err error) {
	i, c := l.next(l.pos)
	if c == '}' {
		l.forget(&o.frame)
		l.depth--
		l.pos = i + 1
		return nil, false, nil
	}
	if o.started {
		if c != ',' {
			return nil, false, ErrSyntax
		}
		i, c = l.next(i + 1)
	}
	o.started = true
	if c != '"' {
		return nil, false, ErrSyntax
	}
	end, esc := l.str(i)
	if end < 0 {
		return nil, false, ErrSyntax
	}
	ref := nameRef{start: i + 1, end: end - 1}
	name = l.data[ref.start:ref.end]
	o.escaped = esc != 0
	if esc != 0 {
		name, ref = l.unescape(ref)
	}
	index := -1
	if o.names != nil {
		if k := o.names.find(name); k >= 0 {
			if o.seen&(1<<k) != 0 {
				return nil, false, ErrSyntax // a repeated name
			}
			o.seen |= 1 << k
			index = k
		}
	}
	o.index = index
	if index < 0 && !l.addTo(o, ref, name) {
		return nil, false, ErrSyntax
	}
	if i, c = l.next(end); c != ':' {
		return nil, false, ErrSyntax
	}
	l.pos = i + 1
	return name, true, nil
}

// addTo records ref, which means name and is not among o's Names, as the
// next name of o, or reports false if o has a member of that name already:
// in o itself while it has room and the name is a plain range of the body,
// in the Lexer's names (see add) from then on.
func (l *Lexer) addTo(o *Object, ref nameRef, name []byte) bool {
	if !o.spilled {
		if o.n < inlineNames && !ref.escaped && uint64(ref.end) <= math.MaxUint32 {
			tag := tagOf(name)
			for _, r := range o.inline[:o.n] {
				if r.tag == tag && string(l.data[r.start:r.end]) == string(name) {
					return false
				}
			}
			o.inline[o.n] = inlineName{start: uint32(ref.start), end: uint32(ref.end), tag: tag}
			o.n++
			return true
		}
		l.spill(o)
	}
	return l.add(&o.frame, ref, name)
}

// spill moves the names o keeps into the Lexer's names, which then keep
// all of o's names. No name of an object inside o is left there (each went
// when its object closed), so o's names start at the current end.
func (l *Lexer) spill(o *Object) {
	if l.b == nil {
		l.take()
	}
	o.frame.first = len(l.names)
	for _, r := range o.inline[:o.n] {
		l.names = append(l.names, nameRef{start: int(r.start), end: int(r.end), tag: r.tag})
	}
	o.spilled = true
}

// Array is an array being read with Element, from OpenArray until Element
// reads its ']'.
type Array struct {
	// started is set once an element was read: the next needs a comma.
	started bool
}

// OpenArray reads the '[' of an array whose elements the caller reads with
// Element, and sets a, the caller's, to its state.
func (l *Lexer) OpenArray(a *Array) error {
	if l.Peek() != '[' || !l.deeper() {
		return ErrSyntax
	}
	l.pos++
	*a = Array{}
	return nil
}

// Element reads up to the next element of a, the innermost open container:
// the comma before it, if it is not the first. The caller then reads the
// element (which refuses a ']' after a comma). At the end of the array
// Element reads the ']' and returns ok false.
func (l *Lexer) Element(a *Array) (ok bool, err error) {
	i, c := l.next(l.pos)
	if c == ']' {
		l.depth--
		l.pos = i + 1
		return false, nil
	}
	if a.started {
		if c != ',' {
			return false, ErrSyntax
		}
		i++
	}
	a.started = true
	l.pos = i
	return true, nil
}
