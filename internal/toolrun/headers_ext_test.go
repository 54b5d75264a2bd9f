package toolrun_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

func rawTool(schema string) (*toolrun.Tool, error) {
	return toolrun.NewRaw("t", "test", []byte(schema), func(context.Context, []byte) (*protocol.CallToolResult, error) {
		return nil, nil
	})
}

// TestHeaderParams: valid x-mcp-header declarations are found with their
// paths; invalid ones fail the tool's construction, since clients drop a
// tool whose declarations are invalid (SEP-2243).
func TestHeaderParams(t *testing.T) {
	t.Parallel()
	tool, err := rawTool(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"level":{"type":"integer","x-mcp-header":"Level"}}},
		"tags":{"type":"array","items":{"type":"string"}},
		"const":{"const":{"x-mcp-header":"not a declaration"}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.HeaderParam{
		{Name: "Level", Path: []string{"opts", "level"}, Type: "integer"},
		{Name: "Region", Path: []string{"region"}, Type: "string"},
	}
	if got := tool.HeaderParams(); !reflect.DeepEqual(got, want) {
		t.Errorf("HeaderParams = %+v, want %+v", got, want)
	}

	invalid := map[string]string{
		"number type":        `{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}`,
		"object type":        `{"type":"object","properties":{"x":{"type":"object","x-mcp-header":"X"}}}`,
		"no type":            `{"type":"object","properties":{"x":{"x-mcp-header":"X"}}}`,
		"empty name":         `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":""}}}`,
		"not a token":        `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"A B"}}}`,
		"not a string":       `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":5}}}`,
		"duplicate, by case": `{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"Id"},"y":{"type":"string","x-mcp-header":"ID"}}}`,
		"inside items":       `{"type":"object","properties":{"x":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}}`,
		"inside anyOf":       `{"type":"object","anyOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}`,
		"inside $defs":       `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"X"}},"properties":{"x":{"$ref":"#/$defs/d"}}}`,
		"inside then":        `{"type":"object","if":{},"then":{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}}`,
		"on the root":        `{"type":"object","x-mcp-header":"X"}`,
	}
	for name, schema := range invalid {
		if _, err := rawTool(schema); err == nil || !strings.Contains(err.Error(), "x-mcp-header") {
			t.Errorf("%s: err = %v, want an x-mcp-header error", name, err)
		}
	}
}
