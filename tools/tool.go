package tools

import (
	"context"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// Tool is a tool the server offers: a name, a description, schemas, and the
// handler that runs a call. Build one with [New] or [NewRaw] and give it to
// wymcp.New. It is immutable after construction and safe for concurrent
// use.
type Tool struct {
	rt *toolrun.Tool
}

func init() {
	// wymcp.New reads the compiled tool from here (internal/toolrun.Of):
	// the server's runtime sits below this package and cannot name Tool.
	toolrun.Wrap = func(rt *toolrun.Tool) any { return &Tool{rt: rt} }
	toolrun.Of = func(public any) *toolrun.Tool {
		if t, _ := public.(*Tool); t != nil {
			return t.rt
		}
		return nil
	}
}

// New returns a typed tool: fn receives the arguments decoded into In and
// its Out becomes the result (docs/design.md §6).
//
// The input schema is inferred from In, which must be a struct or a map with
// string keys, because MCP requires the input schema's root to be an object.
// Struct members follow the `json` tags (omitempty, omitzero and pointer
// fields are optional; the rest are required), a `jsonschema:"…"` tag is the
// member's description, and a struct admits no members it has no field for
// ("additionalProperties":false), so a misspelt argument is reported to the
// model instead of silently dropped. Recursive types, channels, funcs and
// complex numbers make New fail.
//
// The output schema is inferred from Out when Out is a struct or a map with
// string keys (or a pointer to one). The result then carries the JSON of Out
// both as structuredContent and as one text block, for clients that read
// only text (MCP 2025-06-18 and later recommend both). For any other Out —
// an interface, a string, a slice — there is no output schema, because MCP
// requires an object there, and the result is the text block alone. A nil
// pointer Out from a tool with an output schema is answered as a tool
// error: that tool promised an object.
//
// The arguments are validated against the schema before fn runs, so fn only
// ever sees arguments the schema admits. Every way a call can go wrong —
// arguments that fail the schema, an error from fn, a panic, the deadline —
// is answered with a result whose isError is true, which the model can read
// and act on (docs/design.md §5); a panic's value and stack go to the span
// and the log, never to the client.
//
// The schema is compiled here, so a bad name, a bad schema or a `$ref` that
// would need a file or the network fails New, not the first call.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) (*Tool, error) {
	return wrap(toolrun.New(name, description, fn, unwrapOptions(opts)...))
}

// RawHandler runs a raw tool. arguments is params.arguments as sent, already
// validated against the tool's input schema ({} when the request had none).
// It is the handler's own copy: the handler may keep it, or parts of it,
// past its return. It may be called concurrently. ctx is done at the tool's
// deadline or when the client goes away; a handler that does long work
// should watch it.
//
// A nil result with a nil error is an empty result (content []). A result
// with IsError set is the tool reporting its own failure. A non-nil error
// becomes an isError result whose text is err.Error(), so that text must be
// fit for the model to read.
type RawHandler func(ctx context.Context, arguments []byte) (*protocol.CallToolResult, error)

// NewRaw returns a tool whose input schema is the JSON Schema 2020-12 document
// inputSchema (docs/design.md §6). The bytes are copied and kept as they are —
// not compacted, not reordered — so the client sees the author's schema
// exactly in tools/list. The root must be an object schema with
// "type":"object"; the document must be strict JSON; any `$ref` outside the
// document (a URL or a file) makes NewRaw fail, as does an invalid schema.
// References inside the document (`#/$defs/x`, `#anchor`, `$dynamicRef`,
// embedded `$id` resources) resolve as usual; no `$ref` is ever fetched.
//
// With [WithOutputSchema], each non-error result's structuredContent, when
// present, is validated against that schema; a mismatch is answered as a
// tool error rather than sent, because the client would reject it.
func NewRaw(name, description string, inputSchema []byte, fn RawHandler, opts ...Option) (*Tool, error) {
	return wrap(toolrun.NewRaw(name, description, inputSchema, fn, unwrapOptions(opts)...))
}

// Must returns t, and panics if err is not nil. It is for package-level tool
// sets, where a bad tool is a programming error found at start-up.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name, unique within a server.
func (t *Tool) Name() string { return t.rt.Name() }

// Scopes returns the OAuth scopes a caller needs to call the tool (see
// [WithScopes] and [RequireScopes]); nil when it needs none. An embedder
// lists them in its protected-resource metadata's scopes_supported. It is
// a copy.
func (t *Tool) Scopes() []string { return t.rt.Scopes() }

// RequireScopes returns a copy of t that also requires scopes, as if t had
// been built with [WithScopes] naming them too. It is for a deployment that
// decides a tool set's access policy apart from the tools' code, as
// cmd/wymcp's -auth-scope flag does; a tool whose code knows its scopes
// takes WithScopes. t is unchanged.
func RequireScopes(t *Tool, scopes ...string) (*Tool, error) {
	var rt *toolrun.Tool
	if t != nil {
		rt = t.rt
	}
	return wrap(toolrun.RequireScopes(rt, scopes...))
}

func wrap(rt *toolrun.Tool, err error) (*Tool, error) {
	if err != nil {
		return nil, err
	}
	return &Tool{rt: rt}, nil
}
