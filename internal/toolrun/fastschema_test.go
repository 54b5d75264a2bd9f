package toolrun

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// Differential tests of the fast path against the full path. The one
// property that matters: accept(args) == true implies that protocol.Unmarshal
// decodes args and the full validator accepts the result. The
// positive tests check the converse for typical arguments, so that the fast
// path is not trivially always false.

// Go types whose inferred schemas are in the corpus.
type (
	fsEcho struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	fsPoint struct{ X, Y float64 }
	fsAddr  struct {
		Street string  `json:"street"`
		Zip    *string `json:"zip,omitempty"`
	}
	fsAll struct {
		Name   string         `json:"name" jsonschema:"who"`
		Count  int            `json:"count,omitempty"`
		I8     int8           `json:"i8,omitempty"`
		U8     uint8          `json:"u8,omitzero"`
		I16    int16          `json:"i16,omitempty"`
		U16    uint16         `json:"u16,omitempty"`
		I32    int32          `json:"i32,omitempty"`
		U32    uint32         `json:"u32,omitempty"`
		I64    int64          `json:"i64,omitempty"`
		U64    uint64         `json:"u64,omitempty"`
		Ratio  float64        `json:"ratio"`
		F32    float32        `json:"f32,omitempty"`
		OK     bool           `json:"ok"`
		Tags   []string       `json:"tags,omitempty"`
		Pair   [2]int         `json:"pair,omitempty"`
		Blob   []byte         `json:"blob,omitempty"`
		When   time.Time      `json:"when,omitzero"`
		Addr   *fsAddr        `json:"addr"`
		Labels map[string]int `json:"labels,omitempty"`
		Extra  any            `json:"extra,omitempty"`
		Raw    wire.RawJSON   `json:"raw,omitempty"`
		Points []fsPoint      `json:"points,omitempty"`
		Opt    *int           `json:"opt,omitempty"`
		AsStr  int            `json:"as_str,string,omitempty"`
	}
	fsItem struct {
		SKU   string  `json:"sku"`
		Qty   uint16  `json:"qty"`
		Price float64 `json:"price"`
	}
	fsOrder struct {
		ID    string            `json:"id"`
		Items []fsItem          `json:"items"`
		Ship  fsAddr            `json:"ship"`
		Notes map[string]string `json:"notes,omitempty"`
		Gift  *bool             `json:"gift,omitempty"`
	}
)

// fsCase is one schema of the corpus with arguments it must admit on the
// fast path.
type fsCase struct {
	name   string
	schema string
	input  bool // compiled as an input schema (root "type":"object")
	valid  []string
}

// inferred returns the schema New infers for T.
func inferred[T any](t testing.TB) string {
	b, ok, err := inferObject(reflect.TypeFor[T]())
	if err != nil || !ok {
		t.Fatalf("infer %v: %v %v", reflect.TypeFor[T](), ok, err)
	}
	return string(b)
}

// fsCorpus is the corpus of supported schemas.
func fsCorpus(t testing.TB) []fsCase {
	return []fsCase{
		{"echo", `{"type":"object","properties":{"text":{"type":"string","description":"..."}},"required":["text"],"additionalProperties":false}`, true,
			[]string{`{"text":"hello"}`, ` { "text" : "" } `, `{"text":"caf\u00e9 \n \"q\" \/ 😀 é"}`, "{\"text\":\"\x7f\"}", `{"text":"\uffff"}`}},
		{"inferred echo", inferred[fsEcho](t), true, []string{`{"text":"hi"}`}},
		{"inferred all kinds", inferred[fsAll](t), true, []string{
			`{"name":"n","ratio":0.5,"ok":true}`,
			`{"name":"n","ratio":-1e10,"ok":false,"count":-999999999999999,"i8":-128,"u8":255,"i16":32767,"u16":0,"i32":-2147483648,"u32":4294967295,"i64":1,"u64":0,"f32":1.5E+3}`,
			`{"name":"","ratio":0,"ok":true,"tags":[],"pair":[1,2],"blob":"aGk=","when":"2024-01-02T03:04:05Z","addr":{"street":"s"}}`,
			`{"name":"n","ratio":1,"ok":true,"addr":{"street":"s","zip":"12345"},"labels":{"a":1,"b":-2},"extra":{"x":[1,"y",null,true,{"z":{}}]},"raw":[[]]}`,
			`{"name":"n","ratio":1,"ok":true,"points":[{"X":1,"Y":2},{"X":-0.5,"Y":1e-3}],"opt":7,"as_str":"12"}`,
			`{"name":"n","ratio":1,"ok":true,"when":"not a date: format is an annotation","blob":"!!! not base64"}`,
		}},
		{"inferred nested", inferred[fsOrder](t), true, []string{
			`{"id":"o1","items":[],"ship":{"street":"s"}}`,
			`{"id":"o1","items":[{"sku":"a","qty":1,"price":9.99},{"sku":"b","qty":65535,"price":0}],"ship":{"street":"s","zip":"z"},"notes":{"k":"v","k2":""},"gift":true}`,
		}},
		{"inferred map", inferred[map[string]int](t), true, []string{`{}`, `{"a":1,"b":2,"c":-3}`}},
		{"enum const", `{"type":"object","properties":{"mode":{"type":"string","enum":["fast","slow","ünï",""]},"c":{"const":"x"},"e":{"enum":["only"]},"none":{"enum":[]}},"additionalProperties":false}`, true,
			[]string{`{"mode":"fast"}`, `{"mode":"ünï","c":"x","e":"only"}`, `{"mode":""}`, `{}`}},
		{"lengths", `{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":3},"u":{"maxLength":0},"m":{"minLength":1}}}`, true,
			[]string{`{"s":"ab"}`, `{"s":"abc"}`, `{"s":"éé"}`, `{"s":"😀😀😀"}`, `{"s":"\n\u00e9"}`, `{"u":""}`, `{"u":5,"m":true}`, `{"m":"x"}`}},
		{"bounds", `{"type":"object","properties":{"n":{"type":"integer","minimum":-5,"maximum":5},"p":{"type":"number","minimum":0},"q":{"maximum":-1},"big":{"type":"integer","maximum":9223372036854775807,"minimum":-9223372036854775808}}}`, true,
			[]string{`{"n":-5}`, `{"n":5}`, `{"n":0,"p":0}`, `{"n":-0}`, `{"p":123456789012345}`, `{"q":-1,"big":999999999999999}`, `{"q":"not a number"}`, `{"big":-999999999999999}`}},
		{"items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3},"b":{"items":false},"c":{"type":"array","items":{"type":"array","items":{"type":"string"}}}}}`, true,
			[]string{`{"a":[1]}`, `{"a":[1,2,3]}`, `{"b":[]}`, `{"b":"not an array"}`, `{"c":[[],["x","y"],[]]}`}},
		{"nullable", `{"type":"object","properties":{"s":{"type":["string","null"]},"i":{"type":["integer","null"]},"o":{"type":["object","null"],"properties":{"x":{"type":"boolean"}},"required":["x"]},"a":{"type":["array","null"],"items":{"type":["number","null"]}}}}`, true,
			[]string{`{"s":null,"i":null,"o":null,"a":null}`, `{"s":"x","i":3,"o":{"x":false},"a":[1,null,2.5]}`}},
		{"additional true", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`, true,
			[]string{`{"a":"x","b":1,"c":{"d":[]}}`, `{}`}},
		{"additional absent", `{"type":"object","properties":{"a":{"type":"string"}}}`, true,
			[]string{`{"a":"x","b":1}`, `{"b":null,"c":"","d":0}`}},
		{"additional schema", `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string","maxLength":3}}`, true,
			[]string{`{"a":1,"b":"xyz","c":""}`, `{"zzz":"abc"}`}},
		{"required undeclared", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"],"additionalProperties":{"type":"number"}}`, true,
			[]string{`{"a":"x","b":1}`, `{"b":2.5,"a":"","c":3}`}},
		{"boolean subschemas", `{"type":"object","properties":{"yes":true,"no":false,"empty":{}},"required":["yes"]}`, true,
			[]string{`{"yes":[{"x":null}]}`, `{"yes":1,"empty":"x","other":false}`}},
		{"annotations", `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"T","description":"D","$comment":"C","type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant","format":"email","examples":["a@b"],"default":"d","deprecated":true,"readOnly":false,"writeOnly":true,"contentEncoding":"base64","contentMediaType":"application/json","x-other":{"anything":[1]}}},"x-root":true}`, true,
			[]string{`{"tenant":"not an email, not base64"}`, `{}`}},
		{"deep", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"object","properties":{"d":{"type":"string"}},"required":["d"]}}}}}}}`, true,
			[]string{`{"a":{"b":{"c":{"d":"x"}}}}`, `{"a":{"b":{}}}`}},
		{"many properties", `{"type":"object","properties":{"p0":{"type":"string"},"p1":{"type":"string"},"p2":{"type":"string"},"p3":{"type":"string"},"p4":{"type":"string"},"p5":{"type":"string"},"p6":{"type":"string"},"p7":{"type":"string"},"p8":{"type":"string"},"p9":{"type":"string"},"p10":{"type":"integer"},"p11":{"type":"boolean"}},"required":["p0","p11"],"additionalProperties":false}`, true,
			[]string{`{"p0":"","p11":true}`, `{"p11":false,"p9":"x","p0":"y","p10":3,"p5":"z"}`}},
		{"long names", `{"type":"object","properties":{"abcdefgh":{"type":"integer"},"abcdefghij":{"type":"string"},"abcdefghik":{"type":"boolean"},"":{"type":"null"}},"required":["abcdefghij"],"additionalProperties":{"type":"array"}}`, true,
			[]string{`{"abcdefghij":"x"}`, `{"abcdefgh":1,"abcdefghij":"","abcdefghik":true,"":null,"abcdefghi":[],"abcdefghijk":[1]}`}},
		{"numbers", `{"type":"object","properties":{"n":{"type":"number"},"i":{"type":"integer"}}}`, true,
			[]string{`{"n":0}`, `{"n":-0.0}`, `{"n":1.5e-200}`, `{"n":123456789012345678901234567890}`, `{"n":-1E+200}`, `{"i":123456789012345}`, `{"i":-1}`}},
		{"output any", `{}`, false,
			[]string{`null`, `true`, `false`, `0`, `"s"`, `[]`, `{}`, `{"a":[1,{"b":null}],"c":"d"}`, " [ 1 , 2 ]\n"}},
		{"output typed root", `{"type":["array","string"],"items":{"type":"object","properties":{"k":{"const":"v"}}}}`, false,
			[]string{`"x"`, `[]`, `[{"k":"v"},{}]`}},
		{"output inferred", inferred[fsOrder](t), false, []string{`{"id":"o","items":[],"ship":{"street":""}}`}},
	}
}

// fsUnsupported are schemas with a keyword outside the subset: they must
// get no fast validator.
var fsUnsupported = []string{
	`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{}}}`,
	`{"type":"object","$defs":{"x":{}}}`,
	`{"type":"object","allOf":[{}]}`,
	`{"type":"object","anyOf":[{}]}`,
	`{"type":"object","oneOf":[{}]}`,
	`{"type":"object","not":{}}`,
	`{"type":"object","if":{},"then":{}}`,
	`{"type":"object","properties":{"a":{"pattern":"^a"}}}`,
	`{"type":"object","patternProperties":{"^a":{}}}`,
	`{"type":"object","unevaluatedProperties":false}`,
	`{"type":"object","dependentRequired":{"a":["b"]}}`,
	`{"type":"object","dependentSchemas":{"a":{}}}`,
	`{"type":"object","propertyNames":{"maxLength":3}}`,
	`{"type":"object","properties":{"a":{"prefixItems":[{}]}}}`,
	`{"type":"object","properties":{"a":{"contains":{}}}}`,
	`{"type":"object","properties":{"a":{"multipleOf":2}}}`,
	`{"type":"object","properties":{"a":{"exclusiveMinimum":2}}}`,
	`{"type":"object","properties":{"a":{"exclusiveMaximum":2}}}`,
	`{"type":"object","properties":{"a":{"uniqueItems":true}}}`,
	`{"type":"object","minProperties":1}`,
	`{"type":"object","maxProperties":1}`,
	`{"type":"object","foo":1}`,
	`{"type":"object","$id":"https://example.com/s"}`,
	`{"type":"object","properties":{"a":{"$anchor":"x"}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object"}`,
	`{"type":"object","properties":{"a":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}`,
	`{"type":"object","properties":{"a":{"enum":["x",1]}}}`,
	`{"type":"object","properties":{"a":{"enum":[null]}}}`,
	`{"type":"object","properties":{"a":{"const":1}}}`,
	`{"type":"object","properties":{"a":{"const":{"x":"y"}}}}`,
	`{"type":"object","properties":{"a":{"minimum":1.5}}}`,
	`{"type":"object","properties":{"a":{"maximum":1e3}}}`,
	`{"type":"object","properties":{"a":{"maximum":18446744073709551615}}}`,
	`{"type":"object","properties":{"a":{"minLength":1.0}}}`,
	`{"type":"object","properties":{"a":{"contentSchema":{}}}}`,
	`{"type":"object","properties":{"a":{"$dynamicAnchor":"x"}}}`,
	// 65 names: more than the seen-set holds.
	`{"type":"object","properties":{` + func() string {
		var b strings.Builder
		for i := range 65 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{}`, i)
		}
		return b.String()
	}() + `}}`,
}

// fsCompiled is a corpus schema compiled both ways.
type fsCompiled struct {
	name string
	full *jsonschema.Schema
	fast *fastSchema
}

func fsCompileCorpus(t testing.TB) []fsCompiled {
	var out []fsCompiled
	for _, c := range fsCorpus(t) {
		full, err := compile([]byte(c.schema), c.input)
		if err != nil {
			t.Fatalf("%s: compile: %v", c.name, err)
		}
		fast := compileFast([]byte(c.schema))
		if fast == nil {
			t.Fatalf("%s: no fast validator for a schema in the subset: %s", c.name, c.schema)
		}
		out = append(out, fsCompiled{c.name, full, fast})
	}
	return out
}

// fsCheck fails when the fast path accepts args that the full path does not,
// and reports whether the fast path accepted.
func fsCheck(t testing.TB, c fsCompiled, args []byte) bool {
	t.Helper()
	if !c.fast.accept(args) {
		return false
	}
	var inst any
	if err := strictjson.Unmarshal(args, &inst); err != nil {
		t.Fatalf("%s: fast path accepted %q, which does not decode: %v", c.name, args, err)
	}
	if msg := validate(c.full, inst); msg != "" {
		t.Fatalf("%s: fast path accepted %q, which the schema refuses: %s", c.name, args, msg)
	}
	return true
}

// TestFastSchemaPositive: typical valid arguments take the fast path, and
// the full path agrees that they are valid.
func TestFastSchemaPositive(t *testing.T) {
	t.Parallel()
	compiled := fsCompileCorpus(t)
	for i, c := range fsCorpus(t) {
		for _, args := range c.valid {
			if !fsCheck(t, compiled[i], []byte(args)) {
				t.Errorf("%s: %s did not take the fast path", c.name, args)
			}
		}
	}
}

// TestFastSchemaNegative: arguments the fast path must not vouch for —
// invalid JSON, invalid against the schema, or beyond what it checks.
func TestFastSchemaNegative(t *testing.T) {
	t.Parallel()
	byName := map[string]fsCompiled{}
	for _, c := range fsCompileCorpus(t) {
		byName[c.name] = c
	}
	tests := []struct{ schema, args, why string }{
		{"echo", `{}`, "required"},
		{"echo", `{"text":1}`, "type"},
		{"echo", `{"text":"a","x":1}`, "additionalProperties false"},
		{"echo", `{"text":"a","text":"b"}`, "duplicate name"},
		{"echo", `{"te\u0078t":"a"}`, "escaped name"},
		{"echo", `{"text":"a"} x`, "trailing data"},
		{"echo", `{"text":"a",}`, "trailing comma"},
		{"echo", "{\"text\":\"\xff\"}", "invalid UTF-8"},
		{"echo", "{\"text\":\"\xed\xa0\x80\"}", "UTF-8 surrogate"},
		{"echo", "{\"text\":\"\x01\"}", "control byte"},
		{"echo", `{"text":"\ud83d\ude00"}`, "surrogate escapes take the full path"},
		{"echo", `{"text":"\x41"}`, "unknown escape"},
		{"echo", "\ufeff{\"text\":\"a\"}", "byte order mark"},
		{"echo", `{"text":"a"`, "truncated"},
		{"echo", ``, "empty"},
		{"output any", `1e400`, "out of float64 range"},
		{"output any", `01`, "leading zero"},
		{"output any", `1.`, "no fraction digits"},
		{"output any", `-`, "no digits"},
		{"output any", `{"a":1,"a":2}`, "duplicate name in an any-value"},
		{"output any", `[` + strings.Repeat(`[`, fastMaxDepth) + strings.Repeat(`]`, fastMaxDepth) + `]`, "too deep"},
		{"output any", `nul`, "truncated literal"},
		{"output any", `True`, "not a literal"},
		{"inferred map", `{` + fsMembers(fastMaxExtra+1) + `}`, "too many names to check for duplicates"},
		{"inferred map", `{"a":1.0}`, "integer with a fraction: exact but not plain"},
		{"inferred map", `{"a":1e2}`, "integer with an exponent"},
		{"inferred map", `{"a":1234567890123456}`, "more than 15 digits"},
		{"inferred all kinds", `{"name":"n","ratio":1,"ok":true,"u8":256}`, "maximum"},
		{"inferred all kinds", `{"name":"n","ratio":1,"ok":true,"i8":-129}`, "minimum"},
		{"inferred all kinds", `{"name":"n","ratio":1,"ok":true,"addr":null}`, "a pointer is not nullable in the schema"},
		{"inferred all kinds", `{"name":"n","ratio":1,"ok":true,"pair":[1]}`, "minItems"},
		{"inferred all kinds", `{"name":"n","ratio":1,"ok":true,"pair":[1,2,3]}`, "maxItems"},
		{"enum const", `{"mode":"Fast"}`, "enum"},
		{"enum const", `{"mode":"f\u0061st"}`, "escaped enum value"},
		{"enum const", `{"c":"y"}`, "const"},
		{"enum const", `{"none":""}`, "empty enum"},
		{"lengths", `{"s":"a"}`, "minLength"},
		{"lengths", `{"s":"abcd"}`, "maxLength"},
		{"lengths", `{"s":"😀😀😀😀"}`, "maxLength in code points"},
		{"bounds", `{"n":6}`, "maximum"},
		{"bounds", `{"n":-6}`, "minimum"},
		{"bounds", `{"p":-0.5}`, "fraction against a bound"},
		{"bounds", `{"q":0}`, "maximum without type"},
		{"items", `{"a":[]}`, "minItems"},
		{"items", `{"b":[1]}`, "items false"},
		{"items", `{"a":[1.5]}`, "item type"},
		{"boolean subschemas", `{"yes":1,"no":1}`, "false schema"},
		{"required undeclared", `{"a":"x","b":"y"}`, "required name under additionalProperties"},
		{"many properties", `{"p0":"","p11":true,"p12":1}`, "additional"},
		{"many properties", `{"p0":"","p11":true,"p0":""}`, "duplicate known name"},
	}
	for _, tt := range tests {
		c, ok := byName[tt.schema]
		if !ok {
			t.Fatalf("no schema %q", tt.schema)
		}
		if c.fast.accept([]byte(tt.args)) {
			t.Errorf("%s: fast path accepted %q (%s)", tt.schema, tt.args, tt.why)
		}
	}
}

// fsMembers returns n distinct members "k0":0,"k1":0,…
func fsMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	return b.String()
}

// TestFastSchemaUnsupported: a keyword outside the subset, anywhere, means
// no fast validator — the schema still compiles for the full path.
func TestFastSchemaUnsupported(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("testdata/fixture.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(fsUnsupported, string(fixture)) {
		if _, err := compile([]byte(s), true); err != nil {
			t.Errorf("%s: not a valid schema, so the test proves nothing: %v", s, err)
		}
		if compileFast([]byte(s)) != nil {
			t.Errorf("%s: got a fast validator", s)
		}
	}
}

// TestFastSchemaTools: tools get (or do not get) a fast validator as
// construction wires it, and calls answer as before either way.
func TestFastSchemaTools(t *testing.T) {
	t.Parallel()
	typed := Must(New("all", "d", func(context.Context, fsAll) (fsOrder, error) { return fsOrder{}, nil }))
	if typed.fastInput == nil {
		t.Error("typed tool: no fast input validator")
	}
	if typed.fastOutput == nil {
		t.Error("typed tool: no fast output validator")
	}
	raw := Must(NewRaw("fixture", "d", []byte(`{"type":"object","allOf":[{"required":["a"]}]}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) { return nil, nil },
		WithOutputSchema([]byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`))))
	if raw.fastInput != nil {
		t.Error("allOf: got a fast input validator")
	}
	if raw.fastOutput == nil {
		t.Error("simple output schema: no fast output validator")
	}
	if out := typed.Call(t.Context(), wire.RawJSON(`{"name":"n","ratio":1,"ok":true,"u8":300}`)); out.Kind != OutcomeInvalidArguments {
		t.Errorf("u8 300: kind %v", out.Kind)
	}
	if out := typed.Call(t.Context(), wire.RawJSON(`{"name":"n","ratio":1,"ok":true,"u8":200}`)); out.Kind != OutcomeOK {
		t.Errorf("u8 200: kind %v", out.Kind)
	}
}

// TestFastSchemaNoAllocs: the fast path does not allocate.
func TestFastSchemaNoAllocs(t *testing.T) {
	compiled := fsCompileCorpus(t)
	for i, c := range fsCorpus(t) {
		for _, args := range c.valid {
			b := []byte(args)
			if n := testing.AllocsPerRun(20, func() { compiled[i].fast.accept(b) }); n != 0 {
				t.Errorf("%s: %s: %v allocations", c.name, args, n)
			}
		}
	}
}

// fsInteresting are bytes and fragments the mutation test splices in.
var fsInteresting = []string{
	`"`, `\`, `{`, `}`, `[`, `]`, `,`, `:`, ` `, "\t", "\n", `0`, `1`, `9`, `-`, `+`, `.`, `e`, `E`,
	"\x00", "\x01", "\x7f", "\x80", "\xc3", "\xed", "\xff", `n`, `t`, `a`, `u`, `\u`, `\ud800`, `\u00e9`,
	`null`, `true`, `""`, `{}`, `[]`, `1.0`, `1e400`, `"x":1`, `"text":"a",`, `é`, `😀`,
}

// TestFastSchemaMutations splices fsInteresting into every position of
// every valid argument of the corpus (replacing, inserting, deleting) and
// checks each result differentially, against its own schema and against {}
// (which leaves only the JSON syntax to check).
func TestFastSchemaMutations(t *testing.T) {
	t.Parallel()
	compiled := fsCompileCorpus(t)
	accepted, total := 0, 0
	var anySchema fsCompiled // "output any": the syntax alone
	for _, c := range compiled {
		if c.name == "output any" {
			anySchema = c
		}
	}
	for i, c := range fsCorpus(t) {
		for _, args := range c.valid {
			for p := 0; p <= len(args); p++ {
				var muts []string
				if p < len(args) {
					muts = append(muts, args[:p]+args[p+1:])
				}
				for _, x := range fsInteresting {
					muts = append(muts, args[:p]+x+args[p:])
					if p < len(args) {
						muts = append(muts, args[:p]+x+args[p+1:])
					}
				}
				for _, m := range muts {
					for _, sc := range []fsCompiled{compiled[i], anySchema} {
						total++
						if fsCheck(t, sc, []byte(m)) {
							accepted++
						}
					}
				}
			}
		}
	}
	t.Logf("%d of %d mutated arguments took the fast path", accepted, total)
}

// TestFastSchemaRandom generates JSON values from the names, strings and
// numbers the corpus schemas use, so that a fair share is valid and lies
// near the boundaries (bounds, lengths, enum values, duplicate names), and
// checks each against every schema.
func TestFastSchemaRandom(t *testing.T) {
	t.Parallel()
	compiled := fsCompileCorpus(t)
	n := 30000
	if testing.Short() {
		n = 3000
	}
	r := rand.New(rand.NewPCG(1, 2))
	accepted, valid := 0, 0
	for range n {
		args := []byte(fsRandomObject(r, 0))
		var inst any
		decoded := strictjson.Unmarshal(args, &inst) == nil
		for _, c := range compiled {
			if fsCheck(t, c, args) {
				accepted++
			}
			if decoded && validate(c.full, inst) == "" {
				valid++
			}
		}
	}
	t.Logf("of %d checks, %d valid, %d of them on the fast path", n*len(compiled), valid, accepted)
	if accepted < n/10 {
		t.Errorf("only %d accepted: the generator misses the corpus", accepted)
	}
}

var (
	fsNames = []string{"text", "name", "ratio", "ok", "count", "i8", "u8", "u16", "i32", "u32", "tags", "pair",
		"addr", "street", "zip", "labels", "extra", "points", "X", "Y", "id", "items", "sku", "qty", "price", "ship",
		"notes", "gift", "mode", "c", "e", "none", "s", "u", "m", "n", "p", "q", "big", "a", "b", "i", "o", "yes", "no",
		"empty", "tenant", "d", "p0", "p10", "p11", "k", "te\\u0078t", "é"}
	fsStrings = []string{"", "x", "ab", "abc", "abcd", "fast", "slow", "ünï", "Fast", "only", "v", "é", "éé", "😀😀😀",
		"😀😀😀😀", `\n`, `\u00e9`, `\"`, `\ud83d\ude00`, "12", "2024-01-02T03:04:05Z"}
	fsNumbers = []string{"0", "-0", "1", "-1", "5", "-5", "6", "-6", "127", "128", "-128", "-129", "255", "256",
		"65535", "65536", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
		"999999999999999", "-999999999999999", "1000000000000000", "9007199254740993", "1.5", "-0.5", "1.0", "1e2",
		"1E-3", "0.1e1", "1e400", "-1e309", "1e-400", "9223372036854775807", "9223372036854775808",
		"123456789012345678901234567890"}
)

func fsRandomObject(r *rand.Rand, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range r.IntN(5) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + fsNames[r.IntN(len(fsNames))] + `":`)
		b.WriteString(fsRandomValue(r, depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func fsRandomValue(r *rand.Rand, depth int) string {
	k := r.IntN(10)
	if depth > 4 && k >= 7 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[r.IntN(2)]
	case 2, 3:
		return `"` + fsStrings[r.IntN(len(fsStrings))] + `"`
	case 4, 5, 6:
		return fsNumbers[r.IntN(len(fsNumbers))]
	case 7, 8:
		return fsRandomObject(r, depth)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := range r.IntN(4) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(fsRandomValue(r, depth+1))
	}
	b.WriteByte(']')
	return b.String()
}

// FuzzFastSchema: for every corpus schema, whatever bytes the fuzzer makes,
// a true from the fast path means the full path decodes and accepts them.
// It is the differential target of schema conformance; what is valid JSON
// is the strict Lexer's to say, and internal/wire's FuzzLexerDifferential
// holds the Lexer to independent readers.
func FuzzFastSchema(f *testing.F) {
	for _, c := range fsCorpus(f) {
		for _, v := range c.valid {
			f.Add([]byte(v))
		}
	}
	for _, s := range []string{`{"text":"a","text":"b"}`, `1e400`, `{"a":1.0}`, `{"u8":256}`, "{\"text\":\"\xff\"}", `{"s":"😀😀😀😀"}`,
		`{"abcdefghij":"x","abcdefgh\u0069j":"y"}`, `{"abcdefghij":"x","abcdefghik":1}`, `{"s":"\ud83d\ude00\u00e9"}`, `{"text":"a","\u0074ext":"b"}`} {
		f.Add([]byte(s))
	}
	compiled := fsCompileCorpus(f)
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, c := range compiled {
			fsCheck(t, c, args)
		}
	})
}

// BenchmarkFastAccept is the fast path alone on the echo arguments and on
// a typed tool's, without the rest of Call.
func BenchmarkFastAccept(b *testing.B) {
	for _, bc := range []struct{ name, schema, args string }{
		{"echo", `{"type":"object","properties":{"text":{"type":"string","description":"..."}},"required":["text"],"additionalProperties":false}`, `{"text":"hello"}`},
		{"order", inferred[fsOrder](b), `{"id":"o1","items":[{"sku":"a","qty":1,"price":9.99},{"sku":"b","qty":65535,"price":0}],"ship":{"street":"s","zip":"z"},"notes":{"k":"v"},"gift":true}`},
	} {
		fast := compileFast([]byte(bc.schema))
		args := []byte(bc.args)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !fast.accept(args) {
					b.Fatal("not accepted")
				}
			}
		})
	}
}
