// Package protocol holds the MCP 2026-07-28 values a tool author builds and
// reads: the result of a tool call ([CallToolResult]) and its content blocks
// ([TextContent], [ImageContent], [AudioContent], [ResourceLink],
// [EmbeddedResource]), a tool's [ToolAnnotations] and [Icon]s, the server's
// own name ([Implementation]), and the requests a tool makes of the client
// and their answers ([ElicitRequest], [CreateMessageRequest],
// [ListRootsResult], …). JSON values kept as their bytes are
// encoding/json's RawMessage.
//
// The server's side of the wire (reading requests, the header rules, the
// error catalogue, the envelopes, the encoding of each value) is not here:
// it is wymcp's machinery, in internal packages, and an embedder never
// handles it.
package protocol
