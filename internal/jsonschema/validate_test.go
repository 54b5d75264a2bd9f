package jsonschema_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// compile compiles a schema the test wrote, which must compile.
func compile(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.Compile([]byte(schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

// instance decodes an instance as wymcp decodes arguments.
func instance(t *testing.T, raw string) any {
	t.Helper()
	var v any
	if err := strictjson.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("Unmarshal(%s): %v", raw, err)
	}
	return v
}

// validate runs both entry points, which must agree on the answer.
func validate(t *testing.T, s *jsonschema.Schema, v any) []jsonschema.Failure {
	t.Helper()
	failures := s.Validate(v)
	if s.Valid(v) != (failures == nil) {
		t.Fatalf("Valid = %v, Validate = %v", s.Valid(v), failures)
	}
	return failures
}

// TestFailures pins where each failure is said to be and what it says.
// Several of these answers differ from santhosh-tekuri/jsonschema's, where
// it departs from the specification (see the comments), so the oracle's
// corpus cannot hold them.
func TestFailures(t *testing.T) {
	type F = jsonschema.Failure
	tests := []struct {
		name, schema, instance string
		want                   []F
	}{
		{"valid", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"a":1.0}`, nil},
		{"maximum of a member", `{"properties":{"a":{"type":"integer","maximum":5}}}`, `{"a":6}`,
			[]F{{"/a", "got 6, want at most 5"}}},
		{"integer", `{"properties":{"a":{"type":"integer"}}}`, `{"a":1.5}`,
			[]F{{"/a", "got number, want integer"}}},
		{"type list", `{"type":["string","null"]}`, `1`,
			[]F{{"", "got number, want null or string"}}},
		{"required", `{"required":["b","a","c"]}`, `{"a":1}`,
			[]F{{"", "missing properties 'b', 'c'"}}},
		{"dependentRequired", `{"dependentRequired":{"bar":["foo"]}}`, `{"bar":1}`,
			[]F{{"", "missing property 'foo', which 'bar' requires"}}},
		{"additionalProperties false, in name order", `{"properties":{"a":{}},"additionalProperties":false}`, `{"c":1,"a":1,"b":1}`,
			[]F{{"", "additional properties 'b', 'c' not allowed"}}},
		{"unevaluatedProperties false", `{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"x":2}`,
			[]F{{"", "unevaluated property 'x' not allowed"}}},
		{"escaped path", `{"properties":{"a/b":{"properties":{"c~d":{"type":"string"}}}}}`, `{"a/b":{"c~d":1}}`,
			[]F{{"/a~1b/c~0d", "got number, want string"}}},
		{"items in order", `{"items":{"type":"string"}}`, `["a",1,"b",null]`,
			[]F{{"/1", "got number, want string"}, {"/3", "got null, want string"}}},
		{"false schema", `{"prefixItems":[true,false]}`, `[1,2]`,
			[]F{{"/1", "no value is allowed here"}}},
		{"enum", `{"enum":["red","green"]}`, `"blue"`,
			[]F{{"", `want one of ["red","green"]`}}},
		{"const as written", `{"const":{"a":1.0}}`, `{"a":2}`,
			[]F{{"", `want the value {"a":1.0}`}}},
		{"multipleOf by decimal digits", `{"items":{"multipleOf":0.01}}`, `[0.07,0.075]`,
			[]F{{"/1", "got 0.075, want a multiple of 0.01"}}},
		{"characters, not bytes", `{"minLength":2}`, `"é"`,
			[]F{{"", "got 1 character, want at least 2"}}},
		{"pattern", `{"pattern":"^[a-z]+$"}`, `"aB"`,
			[]F{{"", `does not match the pattern "^[a-z]+$"`}}},
		{"propertyNames", `{"propertyNames":{"maxLength":2}}`, `{"abc":1,"ab":2}`,
			[]F{{"", "property name 'abc': got 3 characters, want at most 2"}}},
		{"uniqueItems", `{"uniqueItems":true}`, `[{"a":1,"b":[1]},2,{"b":[1.0],"a":1}]`,
			[]F{{"", "items 0 and 2 are equal, want unique items"}}},
		{"contains", `{"contains":{"type":"string"}}`, `[1]`,
			[]F{{"", "no item matches the 'contains' schema"}}},
		{"minContains", `{"contains":{"type":"string"},"minContains":2}`, `["a",1]`,
			[]F{{"", "1 item matches the 'contains' schema, want at least 2"}}},
		{"maxContains", `{"contains":{"type":"string"},"maxContains":1}`, `["a","b"]`,
			[]F{{"", "2 items match the 'contains' schema, want at most 1"}}},
		{"oneOf", `{"oneOf":[{"type":"integer"},{"minimum":0}]}`, `1`,
			[]F{{"", "matches 'oneOf' schemas 0 and 1, want exactly one"}}},
		{"anyOf says every branch", `{"anyOf":[{"type":"string"},{"minimum":3}]}`, `1`,
			[]F{{"", "got number, want string"}, {"", "got 1, want at least 3"}}},
		{"not", `{"not":{"type":"string"}}`, `"x"`,
			[]F{{"", "must not match the 'not' schema"}}},
		{"if then", `{"if":{"type":"string"},"then":{"minLength":2},"else":{"minimum":0}}`, `-1`,
			[]F{{"", "got -1, want at least 0"}}},
		// The dynamic scope goes on into "propertyNames": the outer
		// resource's "n" applies to the names (santhosh starts afresh
		// there and finds only the inner one).
		{"$dynamicRef in propertyNames", `{"$id":"https://example.com/pn","$ref":"base","$defs":{"o":{"$dynamicAnchor":"n","maxLength":2},"base":{"$id":"base","propertyNames":{"$dynamicRef":"#n"},"$defs":{"d":{"$dynamicAnchor":"n"}}}}}`, `{"abc":1}`,
			[]F{{"", "property name 'abc': got 3 characters, want at most 2"}}},
		// "$recursiveRef" is 2019-09's; 2020-12 has no such keyword, so it
		// applies nothing (santhosh applies it, and finds a cycle).
		{"$recursiveRef is no keyword", `{"$recursiveRef":"#","properties":{"a":{"$recursiveRef":"#"}}}`, `{"a":1}`, nil},
		// A count beyond int64 is more than any instance has (santhosh
		// converts it to an int64, which wraps).
		{"a count beyond int64", `{"maxLength":9227000000000000000,"maxItems":1e30}`, `"abc"`, nil},
		// Every path through the cycle fails at once: anyOf fails too.
		{"cycle", `{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}`, `1`, []F{
			{"", "the schema refers to itself without reaching a value (a reference cycle)"},
			{"", "the schema refers to itself without reaching a value (a reference cycle)"},
		}},
		{"cycle under not", `{"not":{"$ref":"#"}}`, `1`, nil},
		{"recursion that reaches a value", `{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#"}}]}`, `[1,[2,["x"]]]`, []F{
			{"", "got array, want integer"},
			{"/1", "got array, want integer"},
			{"/1/1", "got array, want integer"},
			{"/1/1/0", "got string, want integer"},
			{"/1/1/0", "got string, want array"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := validate(t, compile(t, tt.schema), instance(t, tt.instance))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Validate(%s) against %s\n got %q\nwant %q", tt.instance, tt.schema, got, tt.want)
			}
		})
	}
}

// TestReferenceCycle: {"$ref":"#"} applies itself to the same value
// forever; it is answered as a failure.
func TestReferenceCycle(t *testing.T) {
	s := compile(t, `{"$ref":"#"}`)
	want := []jsonschema.Failure{{Path: "", Message: "the schema refers to itself without reaching a value (a reference cycle)"}}
	for _, raw := range []string{`1`, `{}`, `null`} {
		if got := validate(t, s, instance(t, raw)); !slices.Equal(got, want) {
			t.Errorf("Validate(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestUniqueItemsLarge: uniqueItems costs linear time, so a long array
// cannot stall a call. Not a timed assertion (a loaded machine makes any
// bound flaky): a pairwise comparison would take minutes here, past the
// test binary's timeout.
func TestUniqueItemsLarge(t *testing.T) {
	const n = 100_000
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"id": float64(i), "tags": []any{"t", float64(i % 7)}}
	}
	s := compile(t, `{"uniqueItems":true}`)
	if got := validate(t, s, items); got != nil {
		t.Fatalf("distinct items: %q", got)
	}
	items[n-1] = map[string]any{"tags": []any{"t", 0.0}, "id": 0.0}
	want := []jsonschema.Failure{{Path: "", Message: fmt.Sprintf("items 0 and %d are equal, want unique items", n-1)}}
	if got := validate(t, s, items); !slices.Equal(got, want) {
		t.Fatalf("a duplicate last: got %q, want %q", got, want)
	}
}

// TestMaxFailures: an instance with many bad parts gets the first 64
// reasons, in order.
func TestMaxFailures(t *testing.T) {
	s := compile(t, `{"items":{"type":"string"}}`)
	raw := "[" + strings.Repeat("1,", 999) + "1]"
	got := validate(t, s, instance(t, raw))
	if len(got) != 64 {
		t.Fatalf("got %d failures, want 64", len(got))
	}
	for i, f := range got {
		want := jsonschema.Failure{Path: fmt.Sprintf("/%d", i), Message: "got number, want string"}
		if f != want {
			t.Fatalf("failure %d = %q, want %q", i, f, want)
		}
	}
}
