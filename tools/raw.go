package tools

import (
	"context"
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/protocol"
)

// RawHandler runs a raw tool. arguments is params.arguments as sent, already
// validated against the tool's input schema ({} when the request had none).
// It is the handler's own copy, never memory the server reuses: the handler
// may keep it, or parts of it, past its return. It may be called
// concurrently. ctx is done at the tool's deadline or when the client goes
// away; a handler that does long work should watch it.
//
// A nil result with a nil error is an empty result (content []). A result
// with IsError set is the tool reporting its own failure, counted as
// [OutcomeToolError]. A non-nil error becomes an isError result whose text is
// err.Error(), so that text must be fit for the model to read.
type RawHandler func(ctx context.Context, arguments protocol.RawJSON) (*protocol.CallToolResult, error)

// NewRaw returns a tool whose input schema is the JSON Schema 2020-12 document
// inputSchema (docs/design.md §6). The bytes are copied and kept as they are —
// not compacted, not reordered — in [Tool.Definition], so the client sees the
// author's schema exactly. The root must be an object schema with
// "type":"object"; the document must be strict JSON; any `$ref` outside the
// document (a URL or a file) makes NewRaw fail, as does an invalid schema.
//
// With [WithOutputSchema], each non-error result's structuredContent, when
// present, is validated against that schema; a mismatch is answered as a
// tool error rather than sent, because the client would reject it.
func NewRaw(name, description string, inputSchema []byte, fn RawHandler, opts ...Option) (*Tool, error) {
	t, _, err := build(name, description, fn == nil, slices.Clone(inputSchema), nil, false, opts)
	if err != nil {
		return nil, err
	}
	t.run = func(ctx context.Context, raw protocol.RawJSON) (*protocol.CallToolResult, bool, error) {
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
	b, ok := v.(protocol.RawJSON)
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
