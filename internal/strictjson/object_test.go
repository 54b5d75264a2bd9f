package strictjson

import (
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json/jsontext"
)

// TestStringTail: a string within eight bytes of the end of the body is
// read with one load of the body's last eight bytes (lexstr.go). Every
// string of up to four bytes drawn from the bytes that matter — plain, '"',
// '\', control, the start of a multi-byte sequence — closed or not, at the
// end of bodies of every length around eight, is judged as jsontext judges
// it.
func TestStringTail(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", `"`, `\`, "\x01", "\xc3", "\xa9", "n", "u"}
	var inner []string
	var gen func(s string, n int)
	gen = func(s string, n int) {
		inner = append(inner, s)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(s+c, n-1)
		}
	}
	gen("", 4)
	for _, s := range inner {
		bodies := []string{`"` + s + `"`, `"` + s, `{"` + s + `":0}`}
		for pad := range 10 {
			prefix := "[" + strings.Repeat(" ", pad)
			bodies = append(bodies, prefix+`"`+s+`"]`, prefix+`"`+s+`"`)
		}
		for _, body := range bodies {
			if got, want := Valid([]byte(body)), jsontext.Value(body).IsValid(); got != want {
				t.Fatalf("Valid %v, jsontext %v: %q", got, want, body)
			}
		}
	}
}

// TestNames: a Names finds each of its names, long ones and ones that
// differ only past the eighth byte included, whatever the capacity of the
// slice it is given, and no other name.
func TestNames(t *testing.T) {
	t.Parallel()
	list := []string{"", "\x00", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghij", "abcdefghik", "é", "x\x00y"}
	n := NewNames(list...)
	others := []string{"\x00\x00", "b", "abcdefgi", "abcdefghix", "abcdefgh\x00", "abcdefghijk", "e", "x\x00z", "A"}
	check := func(name string, want int) {
		t.Helper()
		// At the end of a buffer (no room for an eight-byte load), with
		// garbage after it within its capacity, and alone.
		for _, b := range [][]byte{
			[]byte(name),
			[]byte(name + "\xff\xff\xff\xff\xff\xff\xff\xff")[:len(name)],
			append(make([]byte, 0, 64), name...),
		} {
			if got := n.find(b); got != want {
				t.Fatalf("find(%q) (cap %d) = %d, want %d", name, cap(b), got, want)
			}
		}
	}
	for i, name := range list {
		check(name, i)
	}
	for _, name := range others {
		check(name, -1)
	}
	for _, bad := range [][]string{{"a", "b", "a"}, strings.Split(strings.Repeat("x,", MaxNames+1), ",")} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewNames(%d names) did not panic", len(bad))
				}
			}()
			NewNames(bad...)
		}()
	}
}

// TestNamesRefuseRepeats: a repeated name is refused whether the object's
// Names hold it (a bit of the Object) or not (the Lexer's names), escaped
// or not, and an object whose names are all in its Names takes no buffers.
func TestNamesRefuseRepeats(t *testing.T) {
	t.Parallel()
	names := NewNames("a", "b", "abcdefghij")
	read := func(body string) (ok bool, took bool) {
		var l Lexer
		l.Reset([]byte(body))
		defer l.Close()
		var o Object
		if l.OpenObject(&o, names) != nil {
			return false, l.b != nil
		}
		for {
			_, more, err := l.Member(&o)
			if err != nil {
				return false, l.b != nil
			}
			if !more {
				return l.End() == nil, l.b != nil
			}
			if l.Skip() != nil {
				return false, l.b != nil
			}
		}
	}
	for _, c := range []struct {
		body     string
		ok, took bool
	}{
		{`{"a":1,"b":2,"abcdefghij":3}`, true, false},
		{`{"a":1,"b":2,"a":3}`, false, false},
		{`{"a":1,"\u0061":3}`, false, true}, // unescaping takes scratch space
		{`{"abcdefghij":1,"abcdefgh\u0069j":3}`, false, true},
		{`{"a":1,"c":2,"c":3}`, false, false}, // the Object keeps a few other names
		{`{"c":1,"a":2,"\u0063":3}`, false, true},
		{`{"c":1,"d":2,"e":3}`, true, false},
		{`{` + members(8) + `}`, true, false},
		{`{` + members(9) + `}`, true, true}, // the ninth spills them into the Lexer's
		{`{` + members(8) + `,"k3":0}`, false, true},
		{`{` + members(30) + `,"k\u0033":0}`, false, true}, // wide, then a repeat
		{`{"k0":{` + members(9) + `},` + members(9)[7:] + `}`, true, true},
		{`{"k0":{` + members(9) + `},` + members(8)[7:] + `,"k0":1}`, false, true},
		{`{"a":{"a":1},"b":[{"a":1,"b":2}]}`, true, true}, // Skip opens containers
	} {
		ok, took := read(c.body)
		if ok != c.ok || took != c.took {
			t.Errorf("%s: ok %v took buffers %v, want %v %v", c.body, ok, took, c.ok, c.took)
		}
		if want := jsontext.Value(c.body).IsValid(); ok != want {
			t.Errorf("%s: ok %v, jsontext %v", c.body, ok, want)
		}
	}
}

// members returns n members "k0":0,"k1":0,…
func members(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	return b.String()
}

// TestWalkAllocs: walking a value whose names are all known, with a Lexer
// on the stack, allocates nothing and touches no pool; one that needs
// buffers allocates nothing once the pool has some.
func TestWalkAllocs(t *testing.T) {
	names := NewNames("text", "n", "deep")
	walk := func(body []byte) bool {
		var l Lexer
		l.Reset(body)
		ok := walkAll(&l, names) && l.End() == nil
		l.Close()
		return ok
	}
	for _, body := range []string{`{"text":"hello","n":[1,2.5,-3e2,true,null],"deep":{"n":{}}}`, `{"other":{"x":[{"y":1}]}}`} {
		b := []byte(body)
		if !walk(b) {
			t.Fatalf("%s: refused", body)
		}
		if n := testing.AllocsPerRun(100, func() { walk(b) }); n != 0 {
			t.Errorf("%s: %v allocations", body, n)
		}
	}
}

// walkAll reads one value with the caller-driven methods.
func walkAll(l *Lexer, names *Names) bool {
	switch l.Peek() {
	case '{':
		var o Object
		if l.OpenObject(&o, names) != nil {
			return false
		}
		for {
			_, more, err := l.Member(&o)
			if err != nil {
				return false
			}
			if !more {
				return true
			}
			if !walkAll(l, names) {
				return false
			}
		}
	case '[':
		var a Array
		if l.OpenArray(&a) != nil {
			return false
		}
		for {
			more, err := l.Element(&a)
			if err != nil {
				return false
			}
			if !more {
				return true
			}
			if !walkAll(l, names) {
				return false
			}
		}
	case '"':
		_, _, err := l.String()
		return err == nil
	case 't', 'f', 'n':
		return l.Skip() == nil
	}
	_, err := l.Number()
	return err == nil
}

// TestRuneCount: the length of a string in characters, escapes and pairs
// counted as one each, is that of its unescaped form.
func TestRuneCount(t *testing.T) {
	t.Parallel()
	for _, s := range []string{``, `a`, `é`, `😀`, `\n`, `\u00e9`, `\ud83d\ude00`, `a\\b\"c\/`, `x\u0000y😀\ud83d\ude00é`} {
		body := []byte(`"` + s + `"`)
		var l Lexer
		l.Reset(body)
		raw, esc, err := l.String()
		l.Close()
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		unq, err := jsontext.AppendUnquote(nil, body)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := RuneCount(raw, esc), len([]rune(string(unq))); got != want {
			t.Errorf("RuneCount(%s) = %d, want %d", s, got, want)
		}
		if got, want := esc.Any(), strings.Contains(s, `\`); got != want {
			t.Errorf("%s: Any %v", s, got)
		}
		if got, want := esc.Pair(), strings.Contains(s, `\ud83d`); got != want {
			t.Errorf("%s: Pair %v", s, got)
		}
	}
}

// TestDepthMixed: the depth limit counts containers the caller opens and
// those Skip opens alike.
func TestDepthMixed(t *testing.T) {
	t.Parallel()
	// Half the levels walked by the caller, the rest (and one more) skipped.
	for _, skipped := range []int{MaxDepth / 2, MaxDepth/2 + 1} {
		walked := MaxDepth / 2
		body := strings.Repeat("[", walked) + strings.Repeat("[", skipped) + strings.Repeat("]", skipped) + strings.Repeat("]", walked)
		var l Lexer
		l.Reset([]byte(body))
		ok := walkOpen(&l, walked) && l.End() == nil
		l.Close()
		if want := jsontext.Value(body).IsValid(); ok != want || want != (walked+skipped <= MaxDepth) {
			t.Errorf("%d walked + %d skipped: ok %v, jsontext %v", walked, skipped, ok, want)
		}
	}
}

// walkOpen opens n arrays with OpenArray, skips the value inside the
// innermost, and reads the rest to the end of the body.
func walkOpen(l *Lexer, n int) bool {
	if n == 0 {
		return l.Skip() == nil
	}
	var a Array
	if l.OpenArray(&a) != nil {
		return false
	}
	if more, err := l.Element(&a); err != nil || !more {
		return false
	}
	if !walkOpen(l, n-1) {
		return false
	}
	more, err := l.Element(&a)
	return err == nil && !more
}
