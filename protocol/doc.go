// Package protocol holds the MCP 2026-07-28 values a tool author builds and
// reads: the result of a tool call ([CallToolResult]) and its content blocks
// ([TextContent], [ImageContent], [AudioContent], [ResourceLink],
// [EmbeddedResource]), the description of a tool as tools/list shows it
// ([Tool], [ToolAnnotations], [Icon]), the server's own name
// ([Implementation]), and [RawJSON] for values kept as their bytes.
//
// Each type encodes to its wire form as the 2026-07-28 schema spells it.
// The server's side of the wire (reading requests, the header rules, the
// error catalogue, the envelopes) is not here: it is wymcp's machinery, in
// internal packages, and an embedder never handles it.
package protocol
