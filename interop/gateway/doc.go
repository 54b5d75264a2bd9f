// Package gateway tests cmd/wymcp as a gateway (-upstreams) end to end,
// against MCP servers nobody here wrote, each a child process the test
// starts: @modelcontextprotocol/server-everything (npm, Streamable HTTP,
// 2025-11-25 with sessions), a go-sdk v1.8.0 server in its stateless
// 2026-07-28 mode (cmd/sdkserver) and an mcp-go v1.2.1 server
// (cmd/mgoserver); and, run by the gateway library as stdio children
// (stdio_test.go), the npm reference servers and the same go-sdk server on
// its stdio transport (cmd/sdkserver -stdio). A client lists the union and calls each upstream's
// tools through the gateway: results, progress relayed, upstream errors
// mapped (docs/design.md §10a), auth (the caller's token checked at the
// gateway, an RFC 8693 exchanged token at the upstream, from the real
// authorization server of interop/oauth), and an upstream killed in the
// middle of a load and started again. It is a module of its own so that
// neither SDK reaches the library's module graph; it runs with
// WYMCP_E2E_GATEWAY=1 (run.sh installs the npm package and runs it).
package gateway
