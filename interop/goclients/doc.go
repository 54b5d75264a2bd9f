// Package goclients drives a wymcp server that serves both protocol eras
// with the two Go MCP client libraries nobody here wrote, each pinned to
// the 2025-11-25 revision: the official go-sdk and mcp-go. Its tests list
// the tools, call them, follow a progress stream and answer a tool's
// elicitation on the call's stream (docs/design.md §1a). It is a module of
// its own so that neither library reaches the library's module graph.
package goclients
