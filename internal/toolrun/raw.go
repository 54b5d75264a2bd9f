package toolrun

import (
	"context"
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// NewRaw builds a raw tool: tools.NewRaw is its documentation. fn
// receives its own copy of the arguments.
func NewRaw(name, description string, inputSchema []byte, fn func(ctx context.Context, arguments []byte) (*protocol.CallToolResult, error), opts ...Option) (*Tool, error) {
	t, _, err := build(name, description, fn == nil, slices.Clone(inputSchema), nil, false, opts)
	if err != nil {
		return nil, err
	}
	t.run = func(ctx context.Context, raw []byte) (*protocol.CallToolResult, bool, error) {
		// The server reads the request's body into a buffer it reuses for
		// the next request; what a handler is given, it may keep.
		res, err := fn(ctx, slices.Clone(raw))
		if err != nil || res == nil || res.IsError || t.output == nil || res.StructuredContent == nil {
			return res, false, err
		}
		if msg := t.checkOutput(res.StructuredContent); msg != "" {
			return nil, false, fmt.Errorf("Tool %s returned structured content that does not match its output schema: %s", t.def.Name, msg)
		}
		return res, false, nil
	}
	return t, nil
}

// checkOutput validates structured content against the output schema. The
// value may be any Go value the server can encode, so it is encoded and
// decoded back to the JSON form the validator reads; this costs a round trip
// only for raw tools that declare an output schema.
func (t *Tool) checkOutput(v any) string {
	b, ok := v.(wire.RawJSON)
	if !ok {
		var err error
		if b, err = strictjson.Marshal(v); err != nil {
			return "it cannot be encoded as JSON"
		}
	}
	if t.fastOutput != nil && t.fastOutput.accept(b) {
		return ""
	}
	var inst any
	if err := strictjson.Unmarshal(b, &inst); err != nil {
		return "it is not valid JSON"
	}
	return validate(t.output, inst)
}
