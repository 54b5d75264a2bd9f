package wire_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// envelope wraps v as the value of params.arguments in a request that parses.
func envelope(v string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"m","params":{"arguments":` + v + `}}`
}

// nestArrays is n nested arrays; nestObjects is n nested objects.
func nestArrays(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
func nestObjects(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// TestStrictness is the strictness contract of Parse, recorded on the
// jsontext-based scanner before it was replaced and kept since: every case
// answers the same code (0: parsed; -32700: not one strict JSON value;
// -32600: valid JSON that is not a request object). The cases are the edges
// where a hand-written scanner is most likely to drift from a strict one.
func TestStrictness(t *testing.T) {
	t.Parallel()
	const ok, parse, invalid = 0, wire.CodeParseError, wire.CodeInvalidRequest
	req := envelope(`1`)
	cases := []struct {
		name, body string
		code       wire.Code
	}{
		// Framing: one value, white space of four kinds only.
		{"plain", req, ok},
		{"white space around", " \t\r\n" + req + " \t\r\n", ok},
		{"BOM before object", "\xef\xbb\xbf" + req, parse},
		{"BOM before array", "\xef\xbb\xbf[]", parse},
		{"form feed after", req + "\f", parse},
		{"vertical tab after", req + "\v", parse},
		{"NBSP after", req + "\u00a0", parse},
		{"NUL after", req + "\x00", parse},
		{"two values", req + " " + req, parse},
		{"trailing garbage", req + "x", parse},
		{"empty", "", parse},
		{"white space only", " \n", parse},
		{"garbage before object", "x" + req, parse},
		{"invalid UTF-8 after", req + "\xff", parse},
		{"invalid UTF-8 before", "\xff" + req, parse},
		{"invalid UTF-8 between members", `{"jsonrpc":"2.0",` + "\xff" + `"id":1,"method":"m"}`, parse},
		{"top-level string", `"{"`, invalid},
		{"top-level array", `[]`, invalid},
		{"top-level true", `true`, invalid},
		{"top-level bad literal", `nul`, parse},
		{"top-level number then garbage", `1x`, parse},

		// Strings.
		{"NUL escape in a name", envelope(`{"\u0000":1}`), ok},
		{"NUL escape names duplicate", envelope(`{"\u0000":1,"\u0000":2}`), parse},
		{"raw NUL in a string", envelope("\"a\x00b\""), parse},
		{"raw tab in a string", envelope("\"a\tb\""), parse},
		{"raw DEL in a string", envelope("\"a\x7fb\""), ok},
		{"invalid escape", envelope(`"\x"`), parse},
		{"short \\u escape", envelope(`"\u12"`), parse},
		{"non-hex \\u escape", envelope(`"\u12g4"`), parse},
		{"upper-case \\u escape", envelope(`"\u00E9"`), ok},
		{"all simple escapes", envelope(`"\"\\\/\b\f\n\r\t"`), ok},
		{"surrogate pair", envelope(`"\ud83d\ude00"`), ok},
		{"upper-case surrogate pair", envelope(`"\uD83D\uDE00"`), ok},
		{"high surrogate then letter escape", envelope(`"\ud800\u0041"`), parse},
		{"two high surrogates", envelope(`"\ud800\ud800"`), parse},
		{"high surrogate at end", envelope(`"\ud800"`), parse},
		{"high surrogate then text", envelope(`"\ud800x"`), parse},
		{"lone low surrogate", envelope(`"\udc00"`), parse},
		{"UTF-8 encoded surrogate", envelope("\"\xed\xa0\x80\""), parse},
		{"overlong UTF-8", envelope("\"\xc0\x80\""), parse},
		{"UTF-8 above U+10FFFF", envelope("\"\xf4\x90\x80\x80\""), parse},
		{"truncated UTF-8", envelope("\"\xe2\x82\""), parse},
		{"noncharacter U+FFFE", envelope("\"\xef\xbf\xbe\""), ok},
		{"4-byte UTF-8", envelope("\"\xf0\x9f\x98\x80\""), ok},
		{"unterminated string", `{"jsonrpc":"2.0","id":1,"method":"m`, parse},

		// Numbers.
		{"very long integer", envelope(strings.Repeat("9", 100000)), ok},
		{"very long fraction, huge exponent", envelope("0." + strings.Repeat("9", 100000) + "e-99999999999999999999"), ok},
		{"exponent past float64", envelope("1e999999999999999999999"), ok},
		{"minus zero", envelope("-0"), ok},
		{"zero exponent", envelope("0e0"), ok},
		{"upper-case exponent with sign", envelope("1E+2"), ok},
		{"fraction and negative exponent", envelope("0.0e-0"), ok},
		{"leading zero", envelope("01"), parse},
		{"negative leading zero", envelope("-01"), parse},
		{"plus sign", envelope("+1"), parse},
		{"leading dot", envelope(".5"), parse},
		{"trailing dot", envelope("1."), parse},
		{"bare exponent", envelope("1e"), parse},
		{"exponent sign only", envelope("1e+"), parse},
		{"lone minus", envelope("-"), parse},
		{"minus then dot", envelope("-.5"), parse},
		{"hex", envelope("0x1"), parse},
		{"Infinity", envelope("Infinity"), parse},
		{"NaN", envelope("NaN"), parse},

		// Literals and structure.
		{"truncated literal", envelope("tru"), parse},
		{"capitalised literal", envelope("True"), parse},
		{"long literal", envelope("nulll"), parse},
		{"literal then letters", envelope("[truex]"), parse},
		{"trailing comma in array", envelope("[1,]"), parse},
		{"trailing comma in object", envelope(`{"a":1,}`), parse},
		{"leading comma", envelope("[,1]"), parse},
		{"missing comma", envelope("[1 2]"), parse},
		{"non-string name", envelope("{1:2}"), parse},
		{"missing colon", envelope(`{"a" 1}`), parse},
		{"missing value", envelope(`{"a":}`), parse},
		{"mismatched close", envelope(`[1}`), parse},
		{"white space inside", envelope(" \t\r\n[ 1 , { \"a\" : 2 } ] "), ok},
		{"empty containers", envelope(`[{},[],""]`), ok},

		// Duplicate names, at every depth, compared by meaning.
		{"duplicate at top", `{"jsonrpc":"2.0","id":1,"id":1,"method":"m"}`, parse},
		{"escaped duplicate at top", `{"jsonrpc":"2.0","id":1,"method":"m","\u006dethod":"m"}`, parse},
		{"duplicate deep", envelope(`[[[{"a":[{"b":1,"b":2}]}]]]`), parse},
		{"same name in sibling objects", envelope(`[{"a":1},{"a":2}]`), ok},
		{"same name in parent and child", envelope(`{"a":{"a":1}}`), ok},
		{"duplicate after child closes", envelope(`{"a":{"b":1},"b":2,"a":3}`), parse},
		{"escaped slash duplicate", envelope(`{"/":1,"\/":2}`), parse},
		{"U+FFFD raw and escaped", envelope(`{"\ufffd":1,"` + "\xef\xbf\xbd" + `":2}`), parse},
		{"surrogate pair raw and escaped", envelope(`{"\ud83d\ude00":1,"` + "\xf0\x9f\x98\x80" + `":2}`), parse},
		{"names differing by case", envelope(`{"a":1,"A":2}`), ok},
		{"name prefix of another", envelope(`{"ab":1,"a":2}`), ok},
		{"empty name twice", envelope(`{"":1,"":2}`), parse},
		{"duplicate in wide object", envelope(wide(1000, 999)), parse},
		{"duplicate first and last of wide object", envelope(wide(1000, 0)), parse},
		{"wide object without duplicates", envelope(wide(1000, -1)), ok},
		{"duplicate _meta key", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"progressToken":1,"progressToken":1}}}`, parse},
		{"duplicate clientInfo key", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","name":"a"}}}}`, parse},

		// Depth: MaxDepth levels in all (the message object counts) parse;
		// one more is a parse error, whatever the containers.
		{"arrays to MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nestArrays(strictjson.MaxDepth-1) + `}`, ok},
		{"arrays past MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nestArrays(strictjson.MaxDepth) + `}`, parse},
		{"objects to MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nestObjects(strictjson.MaxDepth-1) + `}`, ok},
		{"objects past MaxDepth", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + nestObjects(strictjson.MaxDepth) + `}`, parse},
		{"arguments to MaxDepth", envelope(nestArrays(strictjson.MaxDepth - 2)), ok},
		{"arguments past MaxDepth", envelope(nestArrays(strictjson.MaxDepth - 1)), parse},
		{"top-level arrays to MaxDepth", nestArrays(strictjson.MaxDepth), invalid},
		{"top-level arrays past MaxDepth", nestArrays(strictjson.MaxDepth + 1), parse},
		{"top-level objects to MaxDepth", nestObjects(strictjson.MaxDepth), invalid},
		{"top-level objects past MaxDepth", nestObjects(strictjson.MaxDepth + 1), parse},
		{"far past MaxDepth, unclosed", envelope(strings.Repeat("[", 100000)), parse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, perr := wire.Parse([]byte(tc.body))
			var got wire.Code
			if perr != nil {
				got = perr.Code
			}
			if got != tc.code {
				t.Errorf("code %d (%v), want %d", got, perr, tc.code)
			}
		})
	}
}

// wide is an object of n members "k0".."k<n-1>"; when dup >= 0 a last member
// repeats the name "k<dup>", written with an escaped first letter.
func wide(n, dup int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	if dup >= 0 {
		b.WriteString(`,"\u006b` + strconv.Itoa(dup) + `":0`)
	}
	b.WriteByte('}')
	return b.String()
}
