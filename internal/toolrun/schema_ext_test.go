package toolrun_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

func echoRaw(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
	return protocol.TextResult(string(args)), nil
}

func TestRawSchemaKeptByteForByte(t *testing.T) {
	t.Parallel()
	// Odd whitespace, a key order no encoder would choose, and an escape
	// that compaction or re-encoding would change.
	schema := "{ \"required\" : [\"b\"],\n\t\"type\":\"object\" ,\"properties\":{\"b\":{\"type\":\"string\",\"description\":\"caf\\u00e9\"}}   }"
	tool, err := toolrun.NewRaw("raw", "d", []byte(schema), echoRaw)
	if err != nil {
		t.Fatal(err)
	}
	def := tool.Definition()
	if string(def.InputSchema) != schema {
		t.Fatalf("input schema changed:\n got %q\nwant %q", def.InputSchema, schema)
	}
	def.InputSchema[0] = 'X' // the definition is a copy
	if string(tool.Definition().InputSchema) != schema {
		t.Fatal("mutating Definition() changed the tool")
	}
}

func TestSchemaRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, explanation, schema string
		// inputOnly: refused as an input schema, valid as an output schema
		// (2026-07-28 lets structuredContent be any JSON value).
		inputOnly bool
	}{
		{"file ref", "docs/design.md §6: no $ref is fetched; the default FileLoader would read the file",
			`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`, false},
		{"https ref", "docs/design.md §6: no network $ref", `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`, false},
		{"relative ref", "a relative ref resolves to another URL, also refused", `{"type":"object","properties":{"x":{"$ref":"other.json"}}}`, false},
		{"custom metaschema", "an unknown $schema would have to be loaded", `{"$schema":"https://example.com/meta","type":"object"}`, false},
		{"no type", "MCP requires an input schema's root to say type object", `{"properties":{}}`, true},
		{"array root", "an input schema's root is an object schema", `{"type":"array"}`, true},
		{"not json", "", `{"type":"object"`, false},
		{"duplicate names", "a client and the validator must read the same schema", `{"type":"object","type":"string"}`, false},
		{"invalid schema", "compiled at New", `{"type":"object","properties":{"x":{"type":"nonsense"}}}`, false},
		{"empty", "", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := toolrun.NewRaw("raw", "d", []byte(tt.schema), echoRaw); err == nil {
				t.Fatalf("NewRaw succeeded; %s", tt.explanation)
			}
			_, err := toolrun.NewRaw("raw", "d", []byte(`{"type":"object"}`), echoRaw, toolrun.WithOutputSchema([]byte(tt.schema)))
			switch {
			case tt.inputOnly && err != nil:
				t.Fatalf("NewRaw with this output schema failed: %v; an output schema may describe any JSON value", err)
			case !tt.inputOnly && err == nil:
				t.Fatalf("NewRaw with this output schema succeeded; %s", tt.explanation)
			}
		})
	}
}

func fixtureTool(t *testing.T) *toolrun.Tool {
	t.Helper()
	schema, err := os.ReadFile("testdata/fixture.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return toolrun.Must(toolrun.NewRaw("fixture", "The 2020-12 fixture.", []byte(strings.TrimSpace(string(schema))), echoRaw))
}

func TestFixtureValidation(t *testing.T) {
	t.Parallel()
	tool := fixtureTool(t)
	tests := []struct {
		name, explanation, args string
		valid                   bool
	}{
		{"empty", "nothing is required at the root", `{}`, true},
		{"absent", "absent arguments mean {}", ``, true},
		{"full", "every keyword satisfied",
			`{"name":"n","address":{"street":"s","city":"c"},"home":{"street":"s","city":"c"},"contact":{"email":"e"},"kind":"business","company":"co"}`, true},
		{"anchor ref", "$ref #address applies the anchored schema", `{"address":{"street":"s"}}`, false},
		{"pointer ref", "$ref #/$defs/address applies it too", `{"home":{"city":"c"}}`, false},
		{"pointer ref type", "", `{"home":{"street":1,"city":"c"}}`, false},
		{"anyOf none", "allOf[anyOf] needs email or phone", `{"contact":{}}`, false},
		{"anyOf phone", "either branch will do", `{"contact":{"phone":"p"}}`, true},
		{"if then", "kind business requires company", `{"kind":"business"}`, false},
		{"if else", "any other kind does not", `{"kind":"person"}`, true},
		{"additional", "additionalProperties false", `{"nickname":"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := tool.Call(t.Context(), wire.RawJSON(tt.args))
			if got := out.Kind == toolrun.OutcomeOK; got != tt.valid {
				t.Fatalf("%s: kind %v, result %s", tt.explanation, out.Kind, text(t, out.Result))
			}
			if !tt.valid && out.Kind != toolrun.OutcomeInvalidArguments {
				t.Fatalf("kind %v, want invalid arguments", out.Kind)
			}
		})
	}
}

func TestValidationMessages(t *testing.T) {
	t.Parallel()
	tool := fixtureTool(t)
	typed := toolrun.Must(toolrun.New("echo", "Echoes.", echo))
	tests := []struct {
		name string
		tool *toolrun.Tool
		args string
		want string
	}{
		{"missing property", tool, `{"home":{"street":"s"}}`, "Invalid arguments for tool fixture: at '/home': missing property 'city'"},
		{"wrong type", tool, `{"name":1}`, "Invalid arguments for tool fixture: at '/name': got number, want string"},
		{"two failures", tool, `{"name":true,"extra":1}`,
			"Invalid arguments for tool fixture: at '/name': got boolean, want string; at '': additional property 'extra' not allowed"},
		{"typed missing", typed, `{}`, "Invalid arguments for tool echo: at '': missing property 'text'"},
		{"pointer escaped", tool, `{"a/b~c":1}`, "Invalid arguments for tool fixture: at '': additional property 'a/b~c' not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := tt.tool.Call(t.Context(), wire.RawJSON(tt.args))
			if out.Kind != toolrun.OutcomeInvalidArguments || !out.Result.IsError {
				t.Fatalf("kind %v isError %v", out.Kind, out.Result.IsError)
			}
			if got := text(t, out.Result); got != tt.want {
				t.Fatalf("text\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidationMessageCapped(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.NewRaw("cap", "d", []byte(`{"type":"object","additionalProperties":{"type":"string"}}`), echoRaw))
	var b strings.Builder
	b.WriteByte('{')
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"property_number_` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `_` + strings.Repeat("y", i/26) + `":1`)
	}
	b.WriteByte('}')
	out := tool.Call(t.Context(), wire.RawJSON(b.String()))
	if out.Kind != toolrun.OutcomeInvalidArguments {
		t.Fatalf("kind %v", out.Kind)
	}
	if got := text(t, out.Result); len(got) > 1200 || !strings.HasSuffix(got, "…") {
		t.Fatalf("message of %d bytes not capped: %.80q…", len(got), got)
	}
}
