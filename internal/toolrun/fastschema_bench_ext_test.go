package toolrun_test

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// benchPoint and benchIn are a typical typed tool's input: strings, bounded
// and unbounded integers, a float, a bool, a slice, an optional nested
// struct. Every argument below is valid, so the benchmark measures the
// validation and decode a successful call pays for.
type benchPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type benchIn struct {
	Query  string      `json:"query" jsonschema:"what to look for"`
	Limit  int         `json:"limit,omitempty" jsonschema:"at most this many results"`
	Page   uint16      `json:"page,omitempty"`
	Score  float64     `json:"score"`
	Exact  bool        `json:"exact"`
	Tags   []string    `json:"tags,omitempty"`
	Origin *benchPoint `json:"origin,omitempty"`
}

type benchOut struct {
	N int `json:"n"`
}

func benchSearch(_ context.Context, in benchIn) (benchOut, error) {
	return benchOut{N: len(in.Tags)}, nil
}

// BenchmarkCallTyped is a typed tool with a struct of several kinds.
func BenchmarkCallTyped(b *testing.B) {
	tool := toolrun.Must(toolrun.New("search", "Searches.", benchSearch))
	args := wire.RawJSON(`{"query":"golang json schema","limit":20,"page":3,"score":0.75,"exact":false,"tags":["a","b","c"],"origin":{"x":1.5,"y":-2}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out := tool.Call(ctx, args); out.Kind != toolrun.OutcomeOK {
			b.Fatal(out.Kind, out.Result)
		}
	}
}

// BenchmarkCallRawEcho is a raw tool with the echo schema: validation is
// all the library does before the handler.
func BenchmarkCallRawEcho(b *testing.B) {
	schema := `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"],"additionalProperties":false}`
	tool := toolrun.Must(toolrun.NewRaw("echo", "Echoes.", []byte(schema), func(context.Context, []byte) (*protocol.CallToolResult, error) {
		return nil, nil
	}))
	args := wire.RawJSON(`{"text":"hello"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if out := tool.Call(ctx, args); out.Kind != toolrun.OutcomeOK {
			b.Fatal(out.Kind, out.Result)
		}
	}
}
