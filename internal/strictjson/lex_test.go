package strictjson

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goccy/go-json/jsontext"
)

// TestSpecial: the word-at-a-time search finds the first byte plain does
// not mark, exactly as a byte-by-byte search does — for every byte value at
// every position, after plain bytes and before bytes of any kind (which
// borrows could flag falsely), and on random words.
func TestSpecial(t *testing.T) {
	t.Parallel()
	first := func(w uint64) int {
		for k := range 8 {
			if !plain[byte(w>>(8*k))] {
				return k
			}
		}
		return 8
	}
	got := func(w uint64) int {
		m := special(w)
		if m == 0 {
			return 8
		}
		return bits.TrailingZeros64(m) / 8
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(w uint64) {
		if g, want := got(w), first(w); g != want {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], w)
			t.Fatalf("special(% x): byte %d, want %d", b, g, want)
		}
	}
	for k := range 8 {
		for c := range 256 {
			for range 64 {
				var b [8]byte
				for j := range b {
					switch {
					case j < k:
						b[j] = byte(0x20 + rng.IntN(0x60)) // plain, mostly
						if !plain[b[j]] {
							b[j] = 'a'
						}
					case j == k:
						b[j] = byte(c)
					default:
						b[j] = byte(rng.Uint32())
					}
				}
				check(binary.LittleEndian.Uint64(b[:]))
			}
		}
	}
	for range 1 << 20 {
		check(rng.Uint64())
	}
}

// TestNamesDifferential: random documents of objects nested in objects,
// narrow and wide (past linearNames, so their names go through the hash
// index, its growth and its removals), with names drawn from a small set so
// that some objects repeat a name — sometimes escaped, sometimes only after
// a wide child closed. validJSON must agree with jsontext on each.
func TestNamesDifferential(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var budget int // members left in this document, to bound its size
	var gen func(b *bytes.Buffer, depth int)
	gen = func(b *bytes.Buffer, depth int) {
		if depth > 4 || budget <= 0 || rng.IntN(3) == 0 {
			b.WriteString("1")
			return
		}
		n := rng.IntN(8)
		if rng.IntN(2) == 0 {
			n = linearNames - 2 + rng.IntN(80)
		}
		budget -= n
		// Names from a pool about as large as n: repeats happen, not always.
		pool := n + 1 + rng.IntN(4*n+1)
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			k := rng.IntN(pool)
			if rng.IntN(5) == 0 {
				fmt.Fprintf(b, `"\u006e%d":`, k) // "n%d", escaped
			} else {
				fmt.Fprintf(b, `"n%d":`, k)
			}
			gen(b, depth+1)
		}
		b.WriteByte('}')
	}
	// wideInWide is a wide object whose members are wide objects: closing
	// each child removes its names one by one from an index that still
	// holds its parent's.
	wideInWide := func(b *bytes.Buffer) {
		n := linearNames + rng.IntN(50)
		pool := n + rng.IntN(40*n)
		b.WriteByte('{')
		for range n {
			fmt.Fprintf(b, `"p%d":`, rng.IntN(pool))
			m := linearNames + rng.IntN(30)
			b.WriteByte('{')
			for j := range m {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `"c%d":1`, rng.IntN(40*m))
			}
			b.WriteString("},")
		}
		fmt.Fprintf(b, `"p%d":0}`, rng.IntN(pool))
	}
	var valid, invalid int
	for i := range 3000 {
		var b bytes.Buffer
		budget = 400 + rng.IntN(3000)
		if i%2 == 0 {
			gen(&b, 0)
		} else {
			wideInWide(&b)
		}
		want := jsontext.Value(b.Bytes()).IsValid()
		if got := Valid(b.Bytes()); got != want {
			t.Fatalf("validJSON %v, jsontext %v: %s", got, want, b.Bytes())
		}
		if want {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 500 || invalid < 500 {
		t.Fatalf("unbalanced: %d valid, %d invalid", valid, invalid)
	}
}

// TestNameIndexEmptied: after every body, failed or not, the hash index is
// empty, so the next body starts clean.
func TestNameIndexEmptied(t *testing.T) {
	t.Parallel()
	var l Lexer
	for _, body := range []string{
		`{"a":{},` + wideObject(100, -1)[1:],                                   // closed
		`[` + wideObject(100, -1) + `,` + wideObject(50, -1),                   // unclosed
		`{"x":` + wideObject(100, -1)[:len(wideObject(100, -1))-1] + `,"k3":1`, // dup found
		`{"o":` + wideObject(40, -1) + `,` + wideObject(30, 5)[1:],
	} {
		l.Reset([]byte(body))
		_ = l.Skip()
		l.Release()
		x := &l.b.index
		if x.used != 0 {
			t.Fatalf("%d names left in the index after %.40q", x.used, body)
		}
		for _, s := range x.slots {
			if s.name != 0 {
				t.Fatalf("slot left in the index after %.40q", body)
			}
		}
	}
}

// wideObject is an object of n members; when dup >= 0 the last repeats the
// name of member dup, escaped.
func wideObject(n, dup int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if dup >= 0 {
		fmt.Fprintf(&b, `"\u006b%d":0,`, dup)
	}
	b.WriteString(`"end":true}`)
	return b.String()
}
