package toolrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

type inner struct {
	Street string  `json:"street"`
	Zip    *string `json:"zip,omitempty"`
}

type Base struct {
	ID string `json:"id" jsonschema:"the caller's id"`
}

type args struct {
	Base
	Name   string         `json:"name" jsonschema:"who to greet"`
	Count  int            `json:"count,omitempty"`
	Small  uint8          `json:"small,omitzero"`
	Ratio  float64        `json:"ratio"`
	OK     bool           `json:"ok"`
	Tags   []string       `json:"tags,omitempty"`
	Pair   [2]int         `json:"pair"`
	Blob   []byte         `json:"blob,omitempty"`
	When   time.Time      `json:"when"`
	Addr   *inner         `json:"addr"`
	Labels map[string]int `json:"labels,omitempty"`
	Extra  any            `json:"extra,omitempty"`
	Raw    wire.RawJSON   `json:"raw,omitempty"`
	Skip   string         `json:"-"`
	//lint:ignore U1000 present to show that unexported fields are skipped
	private int
	NoTag   string
}

type reply struct {
	Greeting string `json:"greeting"`
}

// The golden schemas guard the inference contract: key order, required
// members, descriptions and the JSON form of each Go kind.
const (
	goldenInput = `{"type":"object","properties":{` +
		`"id":{"type":"string","description":"the caller's id"},` +
		`"name":{"type":"string","description":"who to greet"},` +
		`"count":{"type":"integer"},` +
		`"small":{"type":"integer","minimum":0,"maximum":255},` +
		`"ratio":{"type":"number"},` +
		`"ok":{"type":"boolean"},` +
		`"tags":{"type":"array","items":{"type":"string"}},` +
		`"pair":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},` +
		`"blob":{"type":"string","contentEncoding":"base64"},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"addr":{"type":"object","properties":{"street":{"type":"string"},"zip":{"type":"string"}},"required":["street"],"additionalProperties":false},` +
		`"labels":{"type":"object","additionalProperties":{"type":"integer"}},` +
		`"extra":{},` +
		`"raw":{},` +
		`"NoTag":{"type":"string"}},` +
		`"required":["id","name","ratio","ok","pair","when","NoTag"],"additionalProperties":false}`
	goldenOutput = `{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"],"additionalProperties":false}`
)

func TestInferGolden(t *testing.T) {
	t.Parallel()
	tool, err := toolrun.New("greet", "Greets.", func(context.Context, args) (reply, error) { return reply{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	def := tool.Definition()
	if got := string(def.InputSchema); got != goldenInput {
		t.Errorf("input schema\n got %s\nwant %s", got, goldenInput)
	}
	if got := string(def.OutputSchema); got != goldenOutput {
		t.Errorf("output schema\n got %s\nwant %s", got, goldenOutput)
	}
}

func TestInferOutputShapes(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, struct{}) (any, error) { return nil, nil }
	tests := []struct {
		name, explanation string
		tool              *toolrun.Tool
		wantOutput        string
	}{
		{"interface", "an interface Out has no output schema", toolrun.Must(toolrun.New("a", "d", noop)), ""},
		{"string", "MCP requires an object output schema, so a string Out has none",
			toolrun.Must(toolrun.New("b", "d", func(context.Context, struct{}) (string, error) { return "", nil })), ""},
		{"pointer", "a pointer to a struct describes the struct",
			toolrun.Must(toolrun.New("c", "d", func(context.Context, struct{}) (*reply, error) { return nil, nil })), goldenOutput},
		{"map", "a map with string keys is an object",
			toolrun.Must(toolrun.New("e", "d", func(context.Context, map[string]bool) (map[string]int, error) { return nil, nil })),
			`{"type":"object","additionalProperties":{"type":"integer"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(tt.tool.Definition().OutputSchema); got != tt.wantOutput {
				t.Errorf("%s: output schema %q, want %q", tt.explanation, got, tt.wantOutput)
			}
		})
	}
	if got := string(tests[3].tool.Definition().InputSchema); got != `{"type":"object","additionalProperties":{"type":"boolean"}}` {
		t.Errorf("map input schema %s", got)
	}
	if got := string(tests[0].tool.Definition().InputSchema); got != `{"type":"object","properties":{},"additionalProperties":false}` {
		t.Errorf("empty struct input schema %s", got)
	}
}

type recursive struct {
	Name     string       `json:"name"`
	Children []*recursive `json:"children"`
}

type withChan struct {
	C chan int `json:"c"`
}

type withFunc struct {
	F func() `json:"f"`
}

type withComplex struct {
	Z complex128 `json:"z"`
}

func TestInferRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		new  func() (*toolrun.Tool, error)
		want string
	}{
		{"recursive", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, recursive) (any, error) { return nil, nil })
		}, "recursive type"},
		{"chan", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, withChan) (any, error) { return nil, nil })
		}, "chan"},
		{"func", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, withFunc) (any, error) { return nil, nil })
		}, "func"},
		{"complex", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, withComplex) (any, error) { return nil, nil })
		}, "complex128"},
		{"non-object input", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, string) (any, error) { return nil, nil })
		}, "must be a struct or a map"},
		{"recursive output", func() (*toolrun.Tool, error) {
			return toolrun.New("t", "d", func(context.Context, struct{}) (recursive, error) { return recursive{}, nil })
		}, "output type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.new()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
