package strictjson

import "errors"

// ErrSyntax is the one error of the Lexer. Parse answers every syntax error
// with the same -32700 message, so the Lexer does not say where or why: it
// stops at the first byte that cannot belong to one strict JSON value.
var ErrSyntax = errors.New("protocol: JSON syntax error")

// Lexer is a strict, single-pass, allocation-free JSON scanner over one body
// held in memory. It accepts exactly what RFC 8259 calls one JSON value with
// optional white space (space, tab, LF, CR) around it, with the stricter
// rules of RFC 7493 (I-JSON) that goccy/go-json's jsontext also applies:
// strings are valid UTF-8 and their \u escapes form no lone surrogate, no
// object has two members of the same name (compared after unescaping), and
// nesting stops at MaxDepth. Everything else is ErrSyntax. It is the one
// judge of valid JSON in wymcp: the transport reads request bodies with it,
// and the tools package validates arguments with it.
//
// It reads values only to find where they end: nothing is decoded, numbers
// are checked against the grammar but never converted, and a value is
// returned as its byte range in the body. The caller drives the walk of
// what it wants to look into (Peek, OpenObject and Member, OpenArray and
// Element, String, Number) and lets Skip or Value walk everything else.
// Skip tracks containers on explicit stacks rather than by Go recursion, so
// hostile nesting costs a byte per level, not a stack frame; the caller's
// own walk keeps the state of each container it opens in its own frame (an
// Object, an Array).
//
// The zero Lexer is ready; Reset sets it on a body. It may live on the
// caller's stack: the buffers it stores names and open containers in come
// from a shared pool the first time it needs them (buffers.go), and Close
// gives them back. A Lexer that is itself kept (pooled) keeps them across
// Resets instead, so that it allocates nothing for ordinary bodies.
type Lexer struct {
	data []byte
	pos  int // the next byte to read
	// depth is the number of open containers the caller opened; with those
	// Skip opened (the length of stack), every opening checks it against
	// MaxDepth.
	depth int

	// stack has one byte per container Skip opened, '{' or '['.
	stack []byte
	// obj is the innermost object Skip opened, which every name Skip reads
	// goes into; objects holds the frames of the objects Skip opened around
	// it, saved as each nested one opened. Keeping the innermost out of the
	// slice spares every member a bounds-checked load.
	obj     objectFrame
	objects []objectFrame
	// names are the names read so far in the open objects, in order; each
	// object's names start at its first. The names of an object the caller
	// reads are here only past what its Object keeps itself: a bit for
	// each name its Names hold, and its first few other names.
	names []nameRef
	// scratch holds the unescaped form of escaped names.
	scratch []byte
	// b holds the buffers above while l has them from the pool; nil before.
	b *buffers
}

// objectFrame is what the Lexer keeps of an object being read to refuse a
// duplicate name in it.
type objectFrame struct {
	first   int  // the index in Lexer.names of this object's first name
	scratch int  // the length of Lexer.scratch when the object opened
	wide    bool // its names are in the buffers' index
}

// Reset sets l on data, keeping its buffers.
func (l *Lexer) Reset(data []byte) {
	l.data, l.pos, l.depth = data, 0, 0
	l.stack = l.stack[:0]
	l.obj = objectFrame{}
	l.objects = l.objects[:0]
	l.names = l.names[:0]
	l.scratch = l.scratch[:0]
	if l.b != nil {
		l.b.index.reset()
	}
}

// Release forgets the body and trims what l keeps for the next one (see
// maxKeptEntries).
func (l *Lexer) Release() {
	l.Reset(nil)
	if cap(l.stack) > maxKeptEntries {
		l.stack = nil
	}
	if cap(l.objects) > maxKeptEntries {
		l.objects = nil
	}
	if cap(l.names) > maxKeptEntries {
		l.names = nil
	}
	if cap(l.scratch) > maxKeptScratch {
		l.scratch = nil
	}
	if l.b != nil && len(l.b.index.slots) > maxKeptSlots {
		l.b.index.slots = nil
	}
}

// The reading methods below take the index of the byte to read and return
// the index after what they read, or -1 for a syntax error. Keeping the
// position in a register through a whole value, rather than in l.pos,
// spares the loop a store and a load per token; l.pos is set only by the
// exported methods a caller drives the walk with.

// space returns the index of the first byte at or after i that is not white
// space: the four bytes RFC 8259 allows, nothing else.
func (l *Lexer) space(i int) int {
	for i < len(l.data) {
		switch l.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// next skips white space from i and returns the index of the next byte and
// the byte, which tells the kind of the next value ('{', '[', '"', 't',
// 'f', 'n', '-' or a digit) or the punctuation; 0 at the end of the body
// (a NUL byte in the body also reads as 0: both are refused wherever they
// are).
func (l *Lexer) next(i int) (int, byte) {
	// Compact JSON has no white space: the byte at i is the answer.
	if i < len(l.data) && l.data[i] > ' ' {
		return i, l.data[i]
	}
	if i = l.space(i); i < len(l.data) {
		return i, l.data[i]
	}
	return i, 0
}

// Peek skips white space and returns the next byte, which tells the kind of
// the next value (see next).
func (l *Lexer) Peek() byte {
	var c byte
	l.pos, c = l.next(l.pos)
	return c
}

// End checks that only white space is left: one value is the whole body.
func (l *Lexer) End() error {
	if l.pos = l.space(l.pos); l.pos != len(l.data) {
		return ErrSyntax
	}
	return nil
}

// Value reads one value of any kind and returns its range in the body,
// white space excluded.
func (l *Lexer) Value() (start, end int, err error) {
	start, c := l.next(l.pos)
	if c == '"' {
		// Most values the scanner keeps are strings: no need for skip's
		// stack.
		end, _ = l.str(start)
	} else {
		end = l.skipFrom(start)
	}
	if end < 0 {
		return 0, 0, ErrSyntax
	}
	l.pos = end
	return start, end, nil
}

// Skip reads one value of any kind, nested containers included.
func (l *Lexer) Skip() error {
	i := l.skipFrom(l.pos)
	if i < 0 {
		return ErrSyntax
	}
	l.pos = i
	return nil
}

// skipFrom reads one value from i without recursion: an opening pushes on
// the stack, a closing pops, and the loop reads values until the container
// it started in is closed again.
func (l *Lexer) skipFrom(i int) int {
	if l.b == nil {
		// A container pushes on the buffers; a scalar needs none.
		if _, c := l.next(i); c == '{' || c == '[' {
			l.take()
		}
	}
	base, limit := len(l.stack), MaxDepth-l.depth
	for {
		// A value starts here.
		var c byte
		i, c = l.next(i)
		switch c {
		case '{':
			if !l.open('{', limit) {
				return -1
			}
			if i, c = l.next(i + 1); c != '}' {
				if i, _ = l.name(i); i < 0 {
					return -1
				}
				continue // to the member's value
			}
			l.close('}')
			i++
		case '[':
			if !l.open('[', limit) {
				return -1
			}
			if i, c = l.next(i + 1); c != ']' {
				continue // to the first element
			}
			l.close(']')
			i++
		case '"':
			i, _ = l.str(i)
		case 't':
			i = l.literal(i, "true")
		case 'f':
			i = l.literal(i, "false")
		case 'n':
			i = l.literal(i, "null")
		default:
			i = l.number(i)
		}
		if i < 0 {
			return -1
		}
		// A value ended: close the containers it ends, until one goes on.
		for {
			if len(l.stack) == base {
				return i
			}
			if i, c = l.next(i); c == ',' {
				if i++; l.stack[len(l.stack)-1] == '{' {
					if i, _ = l.name(i); i < 0 {
						return -1
					}
				}
				break // to the next value
			}
			if !l.close(c) {
				return -1
			}
			i++
		}
	}
}

// open pushes a container Skip reads, '{' or '[', refusing the level past
// MaxDepth: the body's outermost container is level 1, as jsontext counts,
// so MaxDepth levels are read and one more is an error; limit is how many
// of them the containers the caller opened leave to Skip. It is kept small
// enough to be inlined into skipFrom's loop, which has taken the buffers it
// pushes on.
func (l *Lexer) open(kind byte, limit int) bool {
	if len(l.stack) >= limit {
		return false
	}
	l.stack = append(l.stack, kind)
	if kind == '{' {
		l.objects = append(l.objects, l.obj)
		l.obj = objectFrame{first: len(l.names), scratch: len(l.scratch)}
	}
	return true
}

// deeper counts one more container the caller opened, or reports false if
// it would be past MaxDepth (see open).
func (l *Lexer) deeper() bool {
	if l.depth+len(l.stack) >= MaxDepth {
		return false
	}
	l.depth++
	return true
}

// close pops the innermost container Skip opened, with the names it held,
// if c closes it.
func (l *Lexer) close(c byte) bool {
	n := len(l.stack)
	if n == 0 {
		return false
	}
	switch l.stack[n-1] {
	case '{':
		if c != '}' {
			return false
		}
		l.forget(&l.obj)
		l.obj = l.objects[len(l.objects)-1]
		l.objects = l.objects[:len(l.objects)-1]
	case '[':
		if c != ']' {
			return false
		}
	}
	l.stack = l.stack[:n-1]
	return true
}

// name reads, from i, a member name and the colon after it, in the
// innermost object, and refuses it if the object already has a member of
// that name. It returns the name by meaning: the bytes between the quotes
// or, when the name has escapes, its unescaped form in scratch.
func (l *Lexer) name(i int) (int, []byte) {
	i, c := l.next(i)
	if c != '"' {
		return -1, nil
	}
	end, esc := l.str(i)
	if end < 0 {
		return -1, nil
	}
	ref := nameRef{start: i + 1, end: end - 1}
	name := l.data[ref.start:ref.end]
	if esc != 0 {
		name, ref = l.unescape(ref)
	}
	if !l.add(&l.obj, ref, name) {
		return -1, nil
	}
	if i, c = l.next(end); c != ':' {
		return -1, nil
	}
	return i + 1, name
}

// literal reads word (true, false or null) at i.
func (l *Lexer) literal(i int, word string) int {
	if len(l.data)-i < len(word) || string(l.data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// number reads, from i, a number as RFC 8259 spells it:
//
//	-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?
//
// of any length. It does not look past the number: what follows must be
// what the surrounding structure expects, so "01" is a 0 followed by a 1
// that neither an array, an object nor the end of the body accepts.
func (l *Lexer) number(i int) int {
	d := l.data
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return -1
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

// digits returns the index of the first byte at or after i that is not an
// ASCII digit.
func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// Pos returns the offset of the next byte the Lexer reads: after a Value,
// Skip or Member, the end of what it read.
func (l *Lexer) Pos() int { return l.pos }
