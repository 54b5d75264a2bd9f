package strictjson

import (
	"bytes"
	"unicode/utf8"
)

// Reading scalars one by one. Value and Skip read whatever comes next; the
// methods here read a value of a kind the caller has peeked at and return
// what a validator needs to judge it without decoding it: a string's bytes
// and its escapes, a number's text. With OpenObject, Member, OpenArray and
// Element (object.go) they check what they read exactly as Skip does, so a
// caller that walks a body with them instead (the tools package's schema
// fast path does) accepts the same bodies and needs no JSON rules of its
// own.

// Escapes tells what escapes a string has; zero means none, so its bytes
// between the quotes are the string itself.
//
// It is the bitwise OR of the lengths of the string's escapes: 2 for \n and
// its kind, 6 for \uXXXX, 12 for an escaped surrogate pair. Only 12 has bit
// 8 set, so the Lexer records both facts with one OR per escape, no more
// than it spends noting that a string had one.
type Escapes uint8

// Any reports whether the string has escapes.
func (e Escapes) Any() bool { return e != 0 }

// Pair reports whether the string has an escaped surrogate pair
// (\uD83D\uDE00), which is one character in a twelve-byte escape.
func (e Escapes) Pair() bool { return e&8 != 0 }

// String reads the next value, which must be a string, and returns the
// bytes between its quotes as they are in the body (escapes not replaced),
// valid as long as the body, and what escapes it has.
func (l *Lexer) String() (raw []byte, esc Escapes, err error) {
	i, c := l.next(l.pos)
	if c != '"' {
		return nil, 0, ErrSyntax
	}
	end, esc := l.str(i)
	if end < 0 {
		return nil, 0, ErrSyntax
	}
	l.pos = end
	return l.data[i+1 : end-1], esc, nil
}

// Number reads the next value, which must be a number, and returns its
// text, checked against the grammar but not converted.
func (l *Lexer) Number() ([]byte, error) {
	i, _ := l.next(l.pos)
	end := l.number(i)
	if end < 0 {
		return nil, ErrSyntax
	}
	l.pos = end
	return l.data[i:end], nil
}

// RuneCount returns the number of characters (code points) in the string
// whose bytes between the quotes are raw and whose escapes are esc, as
// String returned them: what utf8.RuneCount counts in its unescaped form,
// without unescaping it. raw must be what the Lexer accepted.
func RuneCount(raw []byte, esc Escapes) int {
	if esc == 0 {
		return utf8.RuneCount(raw)
	}
	n := 0
	for {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return n + utf8.RuneCount(raw)
		}
		// An escape, a pair included, is one character.
		n += utf8.RuneCount(raw[:i]) + 1
		// max: a bad escape (raw not from the Lexer) cannot stall the loop.
		raw = raw[i+max(escapeLen(raw[i:]), 1):]
	}
}
