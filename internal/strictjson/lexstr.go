package strictjson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// plain marks the bytes a string holds as they are, which the Lexer passes
// over with one table lookup: printable ASCII but for '"' and '\'. Every
// other byte ends the string, starts an escape, is a control character
// (refused) or starts a multi-byte UTF-8 sequence (checked).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads the string whose opening quote is at i, through its closing
// quote, and returns the index after it (-1 if the string is invalid) and
// what escapes it has (see Escapes). It refuses a control character (below 0x20),
// invalid UTF-8 (overlong forms, UTF-8-encoded surrogates, code points past
// U+10FFFF, truncated sequences), an unknown escape and a \u escape that is
// a lone surrogate: a high one not followed by an escaped low one, or a low
// one alone.
func (l *Lexer) str(i int) (end int, esc Escapes) {
	d := l.data
	i++
	for {
		// Find the next byte that needs a look, eight bytes at a time.
		var c byte
		if i+8 <= len(d) {
			w := binary.LittleEndian.Uint64(d[i : i+8])
			m := special(w)
			if m == 0 {
				i += 8
				continue
			}
			// The flag is bit 8k+7 for byte k: take the byte from w
			// rather than load it again.
			k := bits.TrailingZeros64(m) &^ 7
			i += k / 8
			c = byte(w >> k)
		} else if len(d) >= 8 {
			// Fewer than eight bytes are left: load the body's last eight
			// and shift out those before i. The zero bytes shifted in are
			// control characters to special, so a flag past the end of the
			// body means the string is not closed.
			w := binary.LittleEndian.Uint64(d[len(d)-8:]) >> (8 * (i + 8 - len(d)))
			k := bits.TrailingZeros64(special(w)) &^ 7
			if i += k / 8; i >= len(d) {
				return -1, 0
			}
			c = byte(w >> k)
		} else {
			for i < len(d) && plain[d[i]] {
				i++
			}
			if i >= len(d) {
				return -1, 0
			}
			c = d[i]
		}
		switch {
		case c == '"':
			return i + 1, esc
		case c == '\\':
			n := escapeLen(d[i:])
			if n == 0 {
				return -1, 0
			}
			esc |= Escapes(n)
			i += n
		case c < 0x20:
			return -1, 0
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				return -1, 0
			}
			i += size
		}
	}
}

// Byte-wise constants for special.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special returns a word whose lowest set bit is the high bit of the first
// (lowest-addressed) byte of w, eight bytes read little-endian, that plain
// does not mark: a '"', a '\', a byte below 0x20 or one from 0x80 up; 0 if
// there is none.
//
// Per byte b: b-0x20 has its high bit set when b < 0x20 (it wraps) or
// b >= 0xA0; b^'"' - 1 when b is '"' (0 wraps to 0xFF) or b >= 0x80; the
// same for '\'; and b itself when b >= 0x80. No printable ASCII byte
// but those two sets a high bit. A wrap borrows from the next byte up, which
// may flag it falsely — but only after a byte rightly flagged, never
// before, so the lowest flag is exact.
func special(w uint64) uint64 {
	return ((w - 0x20*ones) | ((w ^ '"'*ones) - ones) | ((w ^ '\\'*ones) - ones) | w) & highs
}

// escapeLen returns the length of the escape at the start of b, a
// backslash: 2 for \" \\ \/ \b \f \n \r \t, 6 for \uXXXX, 12 for a
// surrogate pair \uD8XX\uDCXX; 0 when the escape is invalid.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		r, ok := hex4(b[2:])
		switch {
		case !ok:
			return 0
		case 0xD800 <= r && r < 0xDC00:
			// A high surrogate is half a character: the low half must
			// follow, escaped too.
			if len(b) < 8 || b[6] != '\\' || b[7] != 'u' {
				return 0
			}
			if lo, ok := hex4(b[8:]); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return 0
			}
			return 12
		case 0xDC00 <= r && r < 0xE000:
			return 0 // a low surrogate with no high one before it
		}
		return 6
	}
	return 0
}

// hexValue maps a hexadecimal digit (either case) to its value, and every
// other byte to 0xff.
var hexValue = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = byte(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()

// hex4 reads the four hexadecimal digits (either case) at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	d0, d1, d2, d3 := hexValue[b[0]], hexValue[b[1]], hexValue[b[2]], hexValue[b[3]]
	if (d0|d1|d2|d3)&0xf0 != 0 { // one of them is not a digit
		return 0, false
	}
	return rune(d0)<<12 | rune(d1)<<8 | rune(d2)<<4 | rune(d3), true
}

// appendUnescaped appends to dst what s, the inside of a string str has
// accepted, stands for: its escapes replaced by the characters they mean.
// It is how names are compared by meaning ("\u0061" is "a"). It trusts s to
// be valid and does not check it again.
func appendUnescaped(dst, s []byte) []byte {
	for {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i:]
		if s[1] == 'u' {
			r, _ := hex4(s[2:])
			n := 6
			if utf16.IsSurrogate(r) {
				lo, _ := hex4(s[8:])
				r, n = utf16.DecodeRune(r, lo), 12
			}
			dst = utf8.AppendRune(dst, r)
			s = s[n:]
			continue
		}
		c := s[1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		}
		dst = append(dst, c) // '"', '\' and '/' stand for themselves
		s = s[2:]
	}
}
