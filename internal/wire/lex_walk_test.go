package wire

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// The caller-driven half of FuzzLexerDifferential: the input read token by
// token with the Lexer's exported walk (as the tools fast path reads
// arguments) and with jsontext's Decoder, each writing what it sees as a
// list of tokens in one notation, compared line by line.

// walkNames are the Names the walk gives every object in its second pass:
// short and long names (a lookup compares eight bytes at once), an empty
// one, one with a NUL, a non-ASCII one, and names the seeds repeat.
var walkNames = []string{"a", "b", "id", "name", "abcdefgh", "abcdefghij", "abcdefghik", "", "\x00", "é", "😀", "k3"}

// checkWalk walks data with the Lexer, without Names and with walkNames,
// and checks each walk against jsontext's.
func checkWalk(t *testing.T, data []byte) {
	t.Helper()
	for _, list := range [][]string{nil, walkNames} {
		want, wantOK := refWalk(data, list)
		var names *strictjson.Names
		if list != nil {
			names = strictjson.NewNames(list...)
		}
		got, gotOK := lexWalk(data, names)
		if gotOK != wantOK {
			t.Fatalf("walk (names %v) accepted %v, jsontext %v: %q\nlexer:    %q\njsontext: %q",
				names != nil, gotOK, wantOK, data, got, want)
		}
		if gotOK && !slices.Equal(got, want) {
			t.Fatalf("walk (names %v) and jsontext differ on %q\nlexer:    %q\njsontext: %q", names != nil, data, got, want)
		}
	}
}

// Tokens, as both walks write them:
//
//	{ } [ ]             delimiters
//	N <name> <esc> <i>  a name, unescaped; esc: it had escapes; i: its
//	                    index in the walk's Names, -1 if none
//	S <raw> <n> <esc>   a string: its bytes between the quotes, its length
//	                    in characters, and its escapes (- none, e some,
//	                    p an escaped surrogate pair among them)
//	V <text>            a number or a literal, as written

// lexWalk reads data with the Lexer, giving names to every object.
func lexWalk(data []byte, names *strictjson.Names) (toks []string, ok bool) {
	var l strictjson.Lexer
	l.Reset(data)
	defer l.Close()
	w := &lexWalker{l: &l, data: data, names: names}
	if !w.value() || l.End() != nil {
		return w.toks, false
	}
	return w.toks, true
}

type lexWalker struct {
	l     *strictjson.Lexer
	data  []byte
	names *strictjson.Names
	toks  []string
}

func (w *lexWalker) value() bool {
	l := w.l
	switch c := l.Peek(); c {
	case '{':
		var o strictjson.Object
		if l.OpenObject(&o, w.names) != nil {
			return false
		}
		w.toks = append(w.toks, "{")
		for {
			name, more, err := l.Member(&o)
			if err != nil {
				return false
			}
			if !more {
				w.toks = append(w.toks, "}")
				return true
			}
			w.toks = append(w.toks, fmt.Sprintf("N %q %v %d", name, o.Escaped(), o.Index()))
			if !w.value() {
				return false
			}
		}
	case '[':
		var a strictjson.Array
		if l.OpenArray(&a) != nil {
			return false
		}
		w.toks = append(w.toks, "[")
		for {
			more, err := l.Element(&a)
			if err != nil {
				return false
			}
			if !more {
				w.toks = append(w.toks, "]")
				return true
			}
			if !w.value() {
				return false
			}
		}
	case '"':
		raw, esc, err := l.String()
		if err != nil {
			return false
		}
		kind := "-"
		switch {
		case esc.Pair():
			kind = "p"
		case esc.Any():
			kind = "e"
		}
		w.toks = append(w.toks, fmt.Sprintf("S %q %d %s", raw, strictjson.RuneCount(raw, esc), kind))
		return true
	case 't', 'f', 'n':
		start, end, err := l.Value()
		if err != nil {
			return false
		}
		w.toks = append(w.toks, "V "+string(w.data[start:end]))
		return true
	default:
		text, err := l.Number()
		if err != nil {
			return false
		}
		w.toks = append(w.toks, "V "+string(text))
		return true
	}
}

// refWalk reads data with jsontext's Decoder and writes the same tokens,
// each name's index taken from list (-1 for every name when it is nil).
func refWalk(data []byte, list []string) (toks []string, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		if dec.StackDepth() == 0 && len(toks) > 0 {
			// One value is the whole input; the Decoder would read more.
			_, err := dec.ReadToken()
			return toks, err == io.EOF
		}
		k := dec.PeekKind()
		if k == 0 {
			return toks, false // an error, or nothing but white space
		}
		// In an object, an even count of tokens read means a name next.
		kind, n := dec.StackIndex(dec.StackDepth())
		isName := kind == '{' && n%2 == 0
		switch k {
		case '{', '[', '}', ']':
			if _, err := dec.ReadToken(); err != nil {
				return toks, false
			}
			toks = append(toks, string(k))
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return toks, false
		}
		switch {
		case isName:
			name, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return toks, false
			}
			toks = append(toks, fmt.Sprintf("N %q %v %d", name, bytes.IndexByte(v, '\\') >= 0, slices.Index(list, string(name))))
		case k == '"':
			s, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return toks, false
			}
			raw := v[1 : len(v)-1]
			toks = append(toks, fmt.Sprintf("S %q %d %s", raw, utf8.RuneCount(s), escapeKind(raw)))
		default:
			toks = append(toks, "V "+string(v))
		}
	}
}

// escapeKind reads the escapes of raw, the inside of a valid string, as
// Escapes reports them: - none, e some, p an escaped surrogate pair.
func escapeKind(raw []byte) string {
	kind := "-"
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		kind = "e"
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
		if 0xD800 <= r && r < 0xDC00 {
			return "p"
		}
		i += 5
	}
	return kind
}
