// Package tools defines the tools a wymcp server offers and runs one call of
// one tool (docs/design.md §6).
//
// A tool is built once and never changes: [New] infers its input and output
// schemas from Go types, [NewRaw] takes a JSON Schema 2020-12 document kept
// byte-for-byte. Either way the schema is compiled at construction, so a bad
// name, a bad schema or a `$ref` that would need a file or the network fails
// [New] instead of the first call (build once; the request path only
// reads). The compiled [Tool] is safe for concurrent use. A server's tools
// form a [Set]: unique names, in the order given, resolved by name for each
// tools/call.
//
// # One call
//
// [Tool.Call] is the whole of the tool's part of tools/call: it validates the
// arguments against the input schema, runs the handler with any panic
// contained, and turns every outcome into a [protocol.CallToolResult]. The
// tool declares its deadline ([WithDeadline]); the server owns it, bounding
// the context Call runs under and answering for a handler that ignores it,
// with the one timeout answer [Tool.DeadlineOutcome]. All of them are
// docs/design.md §5 rows answered with a result whose isError is true, not
// a JSON-RPC error, because the model can read such a result and correct
// its next call:
//
//   - arguments that fail the schema: [OutcomeInvalidArguments], and the text
//     names each failing location;
//   - the handler returns an error (or an isError result): [OutcomeToolError];
//   - the handler panics: [OutcomePanic] with a fixed text — the panic value
//     and stack go to [Outcome.Fault] for the span and the log, never to the
//     client (docs/design.md §5: no panic text reaches a client);
//   - the deadline passes: [OutcomeDeadline].
//
// Two more outcomes belong to calls that ask the client for input (below):
// [OutcomeInputRequired], answered with an input_required result, and
// [OutcomeBadInputResponse], a malformed answer refused with -32602.
//
// Call returns an [Outcome] rather than an error so that the caller records
// the kind (docs/design.md §7) and writes the one answer (docs/design.md
// §3).
//
// # Schemas
//
// Schemas are JSON Schema 2020-12, validated by wymcp's own validator (it
// holds no heap until a tool is built: see internal/jsonschema for why).
// A `$schema` naming another dialect is refused when the tool is built. No
// `$ref` is ever fetched, from the network or from a file (docs/design.md
// §6); references inside the document (`#/$defs/x`, `#anchor`,
// `$dynamicRef`, embedded `$id` resources) resolve as usual.
//
// # Asking the client for input
//
// A handler may need something only the client can give: the user's answer
// to a form (elicitation), a completion from the client's model (sampling),
// the client's roots. In revision 2026-07-28 the server sends no requests of
// its own; instead the call answers with an input_required result naming
// what it needs, and the client retries the call with its answers (SEP-2322,
// multi-round-trip requests). [Ask] is the whole of it for a handler:
//
//	var name protocol.ElicitResult
//	if err := tools.Ask(ctx, tools.Elicit("name", askName, &name)); err != nil {
//		return nil, err // ErrInputRequired: the call waits for the answer
//	}
//	// the client has answered: name.Action, name.DecodeContent(&form)
//
// [Elicit], [Sample] and [ListRoots] make the inputs, each with a typed
// result ([protocol.ElicitResult], [protocol.CreateMessageResult],
// [protocol.ListRootsResult]); one Ask of several inputs is one round, Asks
// in sequence are rounds in sequence. The server keeps no state: the handler
// runs again from the top in every round, the answers of earlier rounds
// travel sealed in the call's requestState, and [Remember] and [Recall] keep
// the handler's own values in it. Side effects before an Ask run once per
// round and must be idempotent. Only inputs the client declared it can give
// may be asked ([CanAsk]). Ask's documentation has the rules in full.
//
// # Progress
//
// A handler reports progress with [ReportProgress]; the server installs the
// sink with [WithProgress] when the request asked for progress and can
// stream it (docs/design.md §6). Without a sink the report is dropped, so a
// tool never needs to know how it was called.
package tools
