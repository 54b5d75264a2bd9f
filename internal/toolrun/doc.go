// Package toolrun is the runtime behind package tools: it compiles a
// tool's schemas, runs one call of it, and keeps a server's tool [Set]
// (docs/design.md §6). Package tools is its public face, and documents what
// a tool author sees; this package holds what the server needs besides,
// which no embedder touches: [Tool.Call] and its [Outcome], the call's
// [Round] of a multi-round-trip call, the progress sink, [Tool.Definition]
// and the x-mcp-header declarations.
//
// # One call
//
// [Tool.Call] is the whole of the tool's part of tools/call: it validates the
// arguments against the input schema, runs the handler with any panic
// contained, and turns every outcome into a protocol.CallToolResult. The
// tool declares its deadline; the server owns it, bounding the context Call
// runs under and answering for a handler that ignores it, with the one
// timeout answer [Tool.DeadlineOutcome]. All of them are docs/design.md §5
// rows answered with a result whose isError is true, not a JSON-RPC error,
// because the model can read such a result and correct its next call:
//
//   - arguments that fail the schema: [OutcomeInvalidArguments], and the text
//     names each failing location;
//   - the handler returns an error (or an isError result): [OutcomeToolError];
//   - the handler panics: [OutcomePanic] with a fixed text — the panic value
//     and stack go to [Outcome.Fault] for the span and the log, never to the
//     client (docs/design.md §5: no panic text reaches a client);
//   - the deadline passes: [OutcomeDeadline].
//
// Two more outcomes belong to calls that ask the client for input:
// [OutcomeInputRequired], answered with an input_required result, and
// [OutcomeBadInputResponse], a malformed answer refused with -32602.
//
// Call returns an [Outcome] rather than an error so that the caller records
// the kind (docs/design.md §7) and writes the one answer (docs/design.md
// §3).
//
// # Schemas
//
// Schemas are validated by wymcp's own validator (internal/jsonschema, which
// holds no heap until a tool is built); a fast path judges most valid
// arguments on their bytes (fastschema.go).
//
// # Why a package below tools
//
// The server's runtime (internal/actors, internal/transport, the root
// package) needs all of the above, and package tools must not export it for
// the runtime's sake. The root package reads the compiled tool behind a
// *tools.Tool through [Of], which package tools sets.
package toolrun
