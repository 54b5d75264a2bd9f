package strictjson

import (
	"bytes"
	"hash/maphash"
)

// Duplicate names. Every object, at every depth, is checked: a gateway that
// reads the first of two "method" members and a server that reads the last
// is a parser differential. Names are compared by meaning ("\u0061" is "a"),
// so an escaped name is unescaped into the Lexer's scratch space first.
//
// An object compares each new name with its earlier ones while it has few:
// for the objects of real requests, a handful of short comparisons beats
// hashing and allocates nothing. Past linearNames members that would make a
// hostile object of n members cost n² comparisons, so the object's names go
// into a hash index shared by all open objects, where each new name costs
// one expected probe. The index is kept with the Lexer's buffers: it
// allocates only when it grows.
//
// The names of an object the caller reads (object.go) are first the
// Object's: a bit per name its Names holds refuses the second one, and its
// first few other names are compared in the Object itself. Only past those
// do they go through what follows.

// linearNames is how many members an object has before its names go into
// the hash index.
const linearNames = 16

// nameRef is a name by meaning: a range of the body (the bytes between the
// quotes of a name without escapes) or, when escaped, of Lexer.scratch.
type nameRef struct {
	start, end int
	escaped    bool
	// tag is a few bytes of the name (see tagOf): two names whose tags
	// differ differ, so the linear search compares bytes only on a match.
	tag uint32
}

// tagOf packs a name's length and its first, middle and last bytes, which
// tell apart most names that differ, such as "name1" and "name2", without a
// call to compare them.
func tagOf(name []byte) uint32 {
	n := len(name)
	if n == 0 {
		return 0
	}
	return uint32(n)&0xff | uint32(name[0])<<8 | uint32(name[n/2])<<16 | uint32(name[n-1])<<24
}

// meaning returns the bytes a name stands for.
func (l *Lexer) meaning(r nameRef) []byte {
	if r.escaped {
		return l.scratch[r.start:r.end]
	}
	return l.data[r.start:r.end]
}

// add records ref, which means name, as the next name of the object o, the
// innermost open one, or reports false if o has a member of that name
// already.
//
// It is on the path of every member, so it does only the common case with
// no call but to addSlow: a narrow object with room for one more name,
// whose earlier names all have other tags. Anything else — a name whose
// tag matches an earlier one, whose bytes must then be compared; a wide
// object; the name that makes an object wide; a names buffer that must
// grow or be taken from the pool — goes to addSlow. A call on the common
// path would make the compiler save every register around the loop for it.
func (l *Lexer) add(o *objectFrame, ref nameRef, name []byte) bool {
	names, first := l.names, o.first
	n := len(names)
	if o.wide || n-first >= linearNames || n == cap(names) {
		return l.addSlow(o, ref, name)
	}
	ref.tag = tagOf(name)
	for j := first; j < n; j++ {
		if names[j].tag == ref.tag {
			return l.addSlow(o, ref, name)
		}
	}
	l.names = names[:n+1]
	l.names[n] = ref
	return true
}

// addSlow is add for every case but the common one (see add).
func (l *Lexer) addSlow(o *objectFrame, ref nameRef, name []byte) bool {
	if l.b == nil {
		l.take()
	}
	if o.wide {
		if !l.insert(o, name, len(l.names)) {
			return false
		}
		l.names = append(l.names, ref)
		return true
	}
	ref.tag = tagOf(name)
	for _, r := range l.names[o.first:] {
		if r.tag == ref.tag && bytes.Equal(l.meaning(r), name) {
			return false
		}
	}
	l.names = append(l.names, ref)
	if len(l.names)-o.first > linearNames {
		// Wide: index the names so far (distinct, as just checked).
		o.wide = true
		for i := o.first; i < len(l.names); i++ {
			l.insert(o, l.meaning(l.names[i]), i)
		}
	}
	return true
}

// unescape returns the meaning of the escaped name at ref, a range of the
// body, unescaped into scratch, and its range there.
func (l *Lexer) unescape(ref nameRef) ([]byte, nameRef) {
	if l.b == nil {
		l.take()
	}
	n := len(l.scratch)
	l.scratch = appendUnescaped(l.scratch, l.data[ref.start:ref.end])
	return l.scratch[n:], nameRef{start: n, end: len(l.scratch), escaped: true}
}

// forget drops the names of the object o, which is closing.
func (l *Lexer) forget(o *objectFrame) {
	if o.wide {
		l.unindex(o)
	}
	l.names = l.names[:o.first]
	l.scratch = l.scratch[:o.scratch]
}

// nameIndex is an open-addressing hash table (linear probing) of the names
// of the open wide objects. A slot holds a name's hash and its index in
// Lexer.names; the object a name belongs to is the open object whose range
// of Lexer.names holds that index, so one table serves nested wide objects.
// When an object closes its names are removed, so the table only ever holds
// names of open objects.
type nameIndex struct {
	// seed is random, so a client cannot choose names whose hashes collide
	// and make the table degrade to linear search.
	seed  maphash.Seed
	slots []nameSlot // a power of two of them, at most half in use
	used  int
}

// nameSlot is a slot of nameIndex; name is the index in Lexer.names plus
// one, and 0 marks an empty slot.
type nameSlot struct {
	hash uint64
	name int
}

// insert adds name, at index at of Lexer.names, to the index for the wide
// object o, or reports false if o has a member of that name already.
func (l *Lexer) insert(o *objectFrame, name []byte, at int) bool {
	x := &l.b.index
	if 2*(x.used+1) > len(x.slots) {
		x.grow()
	}
	h := maphash.Bytes(x.seed, name)
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.name == 0 {
			x.slots[i] = nameSlot{hash: h, name: at + 1}
			x.used++
			return true
		}
		if s.hash == h && s.name-1 >= o.first && bytes.Equal(l.meaning(l.names[s.name-1]), name) {
			return false
		}
	}
}

// unindex removes the names of the wide object o, which is closing.
func (l *Lexer) unindex(o *objectFrame) {
	x := &l.b.index
	if n := len(l.names) - o.first; n == x.used && 4*n >= len(x.slots) {
		// The table holds o's names only, and they fill enough of it that
		// clearing it all costs less than removing each.
		clear(x.slots)
		x.used = 0
		return
	}
	mask := uint64(len(x.slots) - 1)
	for at := o.first; at < len(l.names); at++ {
		i := maphash.Bytes(x.seed, l.meaning(l.names[at])) & mask
		for x.slots[i].name != at+1 {
			i = (i + 1) & mask
		}
		x.remove(i)
	}
}

// remove empties slot i by backward shift: each later slot of the same run
// whose home is not between i and itself moves back into the hole, so that
// every name stays reachable from its home without tombstones.
func (x *nameIndex) remove(i uint64) {
	mask := uint64(len(x.slots) - 1)
	for j := (i + 1) & mask; x.slots[j].name != 0; j = (j + 1) & mask {
		home := x.slots[j].hash & mask
		// Does home lie cyclically in (i, j]? Then the slot stays.
		var stays bool
		if i <= j {
			stays = i < home && home <= j
		} else {
			stays = i < home || home <= j
		}
		if !stays {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = nameSlot{}
	x.used--
}

// grow doubles the table (to 64 slots at first) and moves every name into
// the new one.
func (x *nameIndex) grow() {
	if x.seed == (maphash.Seed{}) {
		x.seed = maphash.MakeSeed()
	}
	old := x.slots
	x.slots = make([]nameSlot, max(64, 2*len(old)))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s.name == 0 {
			continue
		}
		i := s.hash & mask
		for x.slots[i].name != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// reset empties the index after a body that failed while wide objects were
// open; after any other body it is empty already.
func (x *nameIndex) reset() {
	if x.used > 0 {
		clear(x.slots)
		x.used = 0
	}
}
