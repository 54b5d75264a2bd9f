package strictjson

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// MaxNames is the most names a Names holds: an Object has a bit for each.
const MaxNames = 64

// Names are the member names an object is expected to have, such as the
// properties of an object schema, set once and read by many Lexers at once.
// Member finds the name of each member among them, so the caller learns
// which one it is by its index rather than comparing it again; and the
// Lexer refuses a repeated one with a bit of the Object instead of keeping
// the name.
type Names struct {
	list []string
	// heads holds, in the same order, the first eight bytes of each name,
	// little-endian and zero-padded, and its length: most names are that
	// short, and for them a lookup compares two words per name, with no
	// call.
	heads []nameHead
}

// nameHead is the start and the length of a name of a Names.
type nameHead struct {
	word uint64
	n    int
}

// NewNames returns the Names of list. It panics if list has more than
// MaxNames names or has one twice: both are the caller's mistake.
func NewNames(list ...string) *Names {
	if len(list) > MaxNames {
		panic(fmt.Sprintf("strictjson: %d names, more than MaxNames", len(list)))
	}
	n := &Names{list: list, heads: make([]nameHead, len(list))}
	for i, name := range list {
		if slices.Index(list[:i], name) >= 0 {
			panic(fmt.Sprintf("strictjson: name %q twice", name))
		}
		var b [8]byte
		copy(b[:], name)
		n.heads[i] = nameHead{word: binary.LittleEndian.Uint64(b[:]), n: len(name)}
	}
	return n
}

// find returns the index of name in n, or -1.
func (n *Names) find(name []byte) int {
	if len(name) > 8 {
		return n.findLong(name)
	}
	return n.findShort(name)
}

// findShort is find for a name of at most eight bytes, which its head and
// length say all of. It calls nothing, so it needs no stack frame.
func (n *Names) findShort(name []byte) int {
	w, k := head(name), len(name)
	for i, h := range n.heads {
		if h.word == w && h.n == k {
			return i
		}
	}
	return -1
}

// findLong is find for a name of more than eight bytes: the head and the
// length pick the candidates, the rest of the bytes decide.
func (n *Names) findLong(name []byte) int {
	w, k := head(name), len(name)
	for i, h := range n.heads {
		if h.word == w && h.n == k && n.list[i][8:] == string(name[8:]) {
			return i
		}
	}
	return -1
}

// head returns the first eight bytes of name as a nameHead holds them.
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
