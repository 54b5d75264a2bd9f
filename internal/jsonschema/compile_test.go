package jsonschema_test

import (
	"testing"

	"github.com/wymcp/wymcp/internal/jsonschema"
)

// TestCompileErrors pins what a refused schema is told: where, which
// keyword, and why.
func TestCompileErrors(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"another dialect", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}`,
			`schema at "#/$schema": $schema: http://json-schema.org/draft-07/schema#: wymcp supports JSON Schema 2020-12 (https://json-schema.org/draft/2020-12/schema) only`},
		{"another dialect in a subschema", `{"$defs":{"a":{"$id":"https://example.com/a","$schema":"https://json-schema.org/draft/2019-09/schema"}}}`,
			`schema at "#/$defs/a/$schema": $schema: https://json-schema.org/draft/2019-09/schema: wymcp supports JSON Schema 2020-12 (https://json-schema.org/draft/2020-12/schema) only`},
		{"relative external $ref", `{"$ref":"other.json"}`,
			`schema at "#/$ref": $ref: "other.json" is outside this document; wymcp never loads a schema from anywhere (docs/design.md §6)`},
		{"absolute external $ref", `{"properties":{"a":{"$ref":"https://example.com/x"}}}`,
			`schema at "#/properties/a/$ref": $ref: "https://example.com/x" is outside this document; wymcp never loads a schema from anywhere (docs/design.md §6)`},
		{"a meta-schema", `{"$ref":"https://json-schema.org/draft/2020-12/schema"}`,
			`schema at "#/$ref": $ref: "https://json-schema.org/draft/2020-12/schema" is outside this document; wymcp never loads a schema from anywhere (docs/design.md §6)`},
		{"external $dynamicRef", `{"$dynamicRef":"https://example.com/x#meta"}`,
			`schema at "#/$dynamicRef": $dynamicRef: "https://example.com/x#meta" is outside this document; wymcp never loads a schema from anywhere (docs/design.md §6)`},
		{"missing pointer, in a schema nothing uses", `{"$defs":{"unused":{"$ref":"#/$defs/missing"}}}`,
			`schema at "#/$defs/unused/$ref": $ref: "#/$defs/missing": the document has nothing at that JSON pointer`},
		{"array index with a leading zero", `{"allOf":[{}],"$ref":"#/allOf/00"}`,
			`schema at "#/$ref": $ref: "#/allOf/00": the document has nothing at that JSON pointer`},
		{"array index with a sign", `{"allOf":[{},{}],"$ref":"#/allOf/+1"}`,
			`schema at "#/$ref": $ref: "#/allOf/+1": the document has nothing at that JSON pointer`},
		{"bad pointer escape", `{"$defs":{"a~2":{}},"$ref":"#/$defs/a~2"}`,
			`schema at "#/$ref": $ref: "#/$defs/a~2": the document has nothing at that JSON pointer`},
		{"a relative $ref against a base with no hierarchy", `{"$id":"urn:example:a","$ref":"b"}`,
			`schema at "#/$ref": $ref: "b" cannot be resolved against "urn:example:a", which has no hierarchy`},
		{"a relative $id against a base with no hierarchy", `{"$id":"urn:example:a","$defs":{"b":{"$id":"c.json"}}}`,
			`schema at "#/$defs/b/$id": $id: "c.json" cannot be resolved against "urn:example:a", which has no hierarchy`},
		{"unknown anchor", `{"$ref":"#nope"}`,
			`schema at "#/$ref": $ref: "#nope": no anchor "nope" in that resource`},
		{"backslash", `{"$defs":{"a":{"$id":"a\\b.json"}}}`,
			`schema at "#/$defs/a/$id": $id: "a\\b.json" is not a URI reference`},
		{"colon in a host", `{"$id":"//::0"}`,
			`schema at "#/$id": $id: "//::0" is not a URI reference`},
		{"$id with a fragment", `{"$id":"https://example.com/x#f"}`,
			`schema at "#/$id": $id: "https://example.com/x#f" is not a URI reference without a fragment`},
		{"duplicate $id", `{"$defs":{"a":{"$id":"https://example.com/d"},"b":{"$id":"https://example.com/d"}}}`,
			`schema at "#/$defs/b/$id": $id: "https://example.com/d" is the $id of another schema in the document`},
		{"duplicate anchor", `{"$defs":{"a":{"$anchor":"x"},"b":{"$dynamicAnchor":"x"}}}`,
			`schema at "#/$defs/b/$dynamicAnchor": $dynamicAnchor: anchor "x" is defined twice in one resource`},
		{"lookahead", `{"pattern":"^(?=a)a"}`,
			`schema at "#/pattern": pattern: "^(?=a)a" is not a regular expression wymcp can run (RE2): error parsing regexp: invalid or unsupported Perl syntax: ` + "`(?=`"},
		{"bad patternProperties name", `{"patternProperties":{"(":{}}}`,
			`schema at "#/patternProperties": patternProperties: "(" is not a regular expression wymcp can run (RE2): error parsing regexp: missing closing ): ` + "`(`"},
		{"type foo", `{"type":"foo"}`,
			`schema at "#/type": type: want a type name or a non-empty array of distinct type names`},
		{"duplicate type", `{"type":["string","string"]}`,
			`schema at "#/type": type: want a type name or a non-empty array of distinct type names`},
		{"negative minLength", `{"properties":{"a":{"minLength":-1}}}`,
			`schema at "#/properties/a/minLength": minLength: want a non-negative integer`},
		{"multipleOf 0", `{"multipleOf":0}`,
			`schema at "#/multipleOf": multipleOf: want a number greater than 0`},
		{"empty allOf", `{"allOf":[]}`,
			`schema at "#/allOf": allOf: want a non-empty array of schemas`},
		{"a number big.Rat will not read", `{"minimum":1e9999999}`,
			`schema at "#/minimum": minimum: 1e9999999: the exponent is too large to hold the number exactly`},
		{"in const", `{"const":[1,{"a":-1e-9999999}]}`,
			`schema at "#/const": const: -1e-9999999: the exponent is too large to hold the number exactly`},
		{"not a schema", `{"items":5}`,
			`schema at "#/items": a schema is an object or a boolean, not number`},
		{"duplicate names", `{"type":"string","type":"number"}`,
			`not a single strict JSON value (duplicate names and invalid UTF-8 are refused)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jsonschema.Compile([]byte(tt.schema))
			if err == nil {
				t.Fatalf("Compile(%s) succeeded, want %q", tt.schema, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Compile(%s)\n got %q\nwant %q", tt.schema, err, tt.want)
			}
		})
	}
}

// TestCompiles holds what compiles, though it may look refused.
func TestCompiles(t *testing.T) {
	for _, schema := range []string{
		`{"$schema":"https://json-schema.org/draft/2020-12/schema#"}`,
		`{"$defs":{"a":{"$id":""},"b":{"$id":"#"}}}`, // name the resource they are in
		`{"$ref":"#/$defs/a~1b/$defs/c~0d","$defs":{"a/b":{"$defs":{"c~d":{}}}}}`,
		`{"$ref":"#/$defs/a%20b","$defs":{"a b":{}}}`,
		`{"additionalItems":false,"$recursiveRef":"#","x-custom":{"type":"nonsense"}}`, // not 2020-12 keywords
		`{"maximum":1e999999,"multipleOf":1e-999}`,
		`{"contains":{},"minContains":0,"maxContains":99999999999999999999}`,
	} {
		if _, err := jsonschema.Compile([]byte(schema)); err != nil {
			t.Errorf("Compile(%s): %v", schema, err)
		}
	}
}
