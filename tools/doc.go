// Package tools defines the tools a wymcp server offers (docs/design.md §6).
//
// A tool is built once and never changes: [New] infers its input and output
// schemas from Go types, [NewRaw] takes a JSON Schema 2020-12 document kept
// byte-for-byte. Either way the schema is compiled at construction, so a bad
// name, a bad schema or a `$ref` that would need a file or the network fails
// New instead of the first call. The [Tool] is safe for concurrent use; give
// the tools to wymcp.New.
//
// # One call
//
// The server validates a call's arguments against the input schema, runs
// the handler with any panic contained, and bounds it by the tool's
// deadline ([WithDeadline]). Every way a call can fail is answered with a
// result whose isError is true, not a JSON-RPC error, because the model can
// read such a result and correct its next call (docs/design.md §5):
// arguments that fail the schema (the text names each failing location), a
// handler's error, a panic (a fixed text: its value and stack go to the
// span and the log, never to the client), the deadline.
//
// # Schemas
//
// Schemas are JSON Schema 2020-12, validated by wymcp's own validator. A
// `$schema` naming another dialect is refused when the tool is built. No
// `$ref` is ever fetched, from the network or from a file (docs/design.md
// §6); references inside the document resolve as usual.
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
// A handler reports progress with [ReportProgress]. The server streams the
// reports when the request asked for progress and can receive a stream;
// otherwise they are dropped, so a tool never needs to know how it was
// called.
package tools
