package toolrun_test

import (
	"context"
	"os"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// FuzzCallArguments: argument validation never panics and always yields a
// result: arbitrary bytes against the 2020-12 fixture schema ($anchor,
// $ref, allOf/anyOf, if/then/else) and against a typed tool's schema.
func FuzzCallArguments(f *testing.F) {
	schema, err := os.ReadFile("testdata/fixture.schema.json")
	if err != nil {
		f.Fatal(err)
	}
	raw := toolrun.Must(toolrun.NewRaw("fixture", "fixture", schema, func(context.Context, []byte) (*protocol.CallToolResult, error) {
		return protocol.TextResult("ok"), nil
	}))
	typed := toolrun.Must(toolrun.New("typed", "typed", func(_ context.Context, in struct {
		Name  string            `json:"name"`
		N     int8              `json:"n,omitempty"`
		Tags  []string          `json:"tags,omitempty"`
		Attrs map[string]uint16 `json:"attrs,omitempty"`
	}) (map[string]any, error) {
		return map[string]any{"name": in.Name}, nil
	}))
	for _, s := range []string{
		`{}`, `{"name":"x"}`, `{"name":"x","address":{"street":"s","city":"c"}}`,
		`{"kind":"business"}`, `{"contact":{"email":"e"}}`, `{"n":300}`, `{"attrs":{"a":-1}}`,
		`[]`, `null`, `{"name":"\ud800"}`, `{"a":` + "[[[[[[[[[[1]]]]]]]]]]" + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for _, tool := range []*toolrun.Tool{raw, typed} {
			out := tool.Call(context.Background(), args)
			if out.Result == nil {
				t.Fatalf("%s: nil result", tool.Name())
			}
			if out.Kind == toolrun.OutcomePanic {
				t.Fatalf("%s: the tool panicked on %q: %v", tool.Name(), args, out.Fault)
			}
		}
	})
}
