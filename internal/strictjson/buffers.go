package strictjson

import "sync"

// The Lexer's buffers. A Lexer stores what it must remember while it reads
// — the containers Skip opened, the names read in open objects, unescaped
// names, the index of wide objects — in slices it takes from a shared pool
// the first time it needs any of them. Reading a value the caller walks
// itself needs none as long as each object's names are in the Names given
// for it or few (an Object keeps a few others itself) and none is escaped:
// the tools fast path on typical arguments. Such a Lexer lives on the
// caller's stack and touches no pool at all.

// buffers are the storage one Lexer takes from the pool.
type buffers struct {
	stack   []byte
	objects []objectFrame
	names   []nameRef
	scratch []byte
	index   nameIndex
}

// pool holds the buffers of Lexers that were closed, so that the next one
// allocates nothing for an ordinary body.
var pool = sync.Pool{New: func() any {
	return &buffers{
		stack:   make([]byte, 0, 32),
		objects: make([]objectFrame, 0, 16),
		names:   make([]nameRef, 0, 32),
		scratch: make([]byte, 0, 128),
	}
}}

// Past these capacities, a buffer grown by a hostile body is dropped rather
// than kept, where it would hold its memory for as long as the Lexer or the
// pool keeps it. They are generous enough that a body nested to MaxDepth,
// or with an object of ten thousand members, is read again without growing
// anything; at worst one set of buffers keeps about 1.4 MB.
const (
	maxKeptEntries = 1 << 14 // stack, objects and names
	maxKeptSlots   = 1 << 15 // index slots
	maxKeptScratch = 1 << 16 // bytes of unescaped names
)

// take gives l, which has no buffers, a set from the pool. It is called
// where a buffer is first written, on paths a walk of known names does not
// take.
func (l *Lexer) take() {
	b := pool.Get().(*buffers)
	l.b = b
	l.stack, l.objects, l.names, l.scratch = b.stack[:0], b.objects[:0], b.names[:0], b.scratch[:0]
}

// Close forgets the body and gives l's buffers back to the pool, for a
// Lexer that is not kept: one on the caller's stack. A Lexer that is kept
// calls Release instead, and keeps its buffers for the next body. Close is
// small enough to inline, so a Lexer that took no buffers pays no call.
func (l *Lexer) Close() {
	l.data = nil
	if l.b != nil {
		l.giveBack()
	}
}

// giveBack is Close for a Lexer that took buffers.
func (l *Lexer) giveBack() {
	l.Release()
	b := l.b
	b.stack, b.objects, b.names, b.scratch = l.stack, l.objects, l.names, l.scratch
	*l = Lexer{}
	pool.Put(b)
}
