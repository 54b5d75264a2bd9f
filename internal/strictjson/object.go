package strictjson

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Objects and arrays the caller reads itself. OpenObject and OpenArray
// return the state of the container, an Object or an Array, which the
// caller holds in its own frame and hands back to Member or Element for
// each member or element: the caller's recursion is the container stack,
// and the Lexer keeps only the depth.

// MaxNames is the most names a Names holds: an Object has a bit for each.
const MaxNames = 64

// Names are the member names an object is expected to have, such as the
// properties of an object schema, set once and read by many Lexers at once.
// Member finds the name of each member among them, so the caller learns
// which one it is by its index rather than comparing it again; and the
// Lexer refuses a repeated one with a bit of the Object instead of keeping
// the name, so an object whose names are all in its Names needs no buffer.
type Names struct {
	list []string
	// heads holds the first eight bytes of each name, little-endian and
	// zero-padded, in the same order: most names are that short, and
	// for them a lookup compares one word and a length per name, with no
	// call.
	heads []uint64
}

// NewNames returns the Names of list. It panics if list has more than
// MaxNames names or has one twice: both are the caller's mistake.
func NewNames(list ...string) *Names {
	if len(list) > MaxNames {
		panic(fmt.Sprintf("strictjson: %d names, more than MaxNames", len(list)))
	}
	n := &Names{list: list, heads: make([]uint64, len(list))}
	for i, name := range list {
		if slices.Index(list[:i], name) >= 0 {
			panic(fmt.Sprintf("strictjson: name %q twice", name))
		}
		var b [8]byte
		copy(b[:], name)
		n.heads[i] = binary.LittleEndian.Uint64(b[:])
	}
	return n
}

// find returns the index of name in n, or -1.
func (n *Names) find(name []byte) int {
	h := head(name)
	for i, w := range n.heads {
		if w == h && len(n.list[i]) == len(name) && (len(name) <= 8 || n.list[i][8:] == string(name[8:])) {
			return i
		}
	}
	return -1
}

// head returns the first eight bytes of name as Names.heads holds them.
// A name the Lexer returns is followed in its buffer by at least the
// quote and colon after it, so eight bytes can usually be loaded at once
// and masked to the name's length.
func head(name []byte) uint64 {
	n := len(name)
	if n >= 8 {
		return binary.LittleEndian.Uint64(name)
	}
	if cap(name) >= 8 {
		return binary.LittleEndian.Uint64(name[:8]) & (1<<(8*n) - 1)
	}
	var w uint64
	for i := n - 1; i >= 0; i-- {
		w = w<<8 | uint64(name[i])
	}
	return w
}

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
}

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
	*o = Object{frame: objectFrame{first: len(l.names), scratch: len(l.scratch)}, names: names, index: -1}
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
	if o.escaped = esc != 0; o.escaped {
		name, ref = l.unescape(ref)
	}
	o.index = -1
	if o.names != nil {
		if k := o.names.find(name); k >= 0 {
			if o.seen&(1<<k) != 0 {
				return nil, false, ErrSyntax // a repeated name
			}
			o.seen |= 1 << k
			o.index = k
		}
	}
	if o.index < 0 && !l.add(&o.frame, ref, name) {
		return nil, false, ErrSyntax
	}
	if i, c = l.next(end); c != ':' {
		return nil, false, ErrSyntax
	}
	l.pos = i + 1
	return name, true, nil
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
