// Command mcpgo serves the bench echo tool with github.com/mark3labs/mcp-go
// v1.2.1 in its stateless mode: NewStreamableHTTPServer(s, WithStateLess(true)).
package main

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/wymcp/wymcp/bench/serve"
)

func main() {
	s := server.NewMCPServer("echo-mcpgo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echoes the given text back as one text block."),
		mcp.WithString("text", mcp.Required(), mcp.Description("Text to echo back"))),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateLess(true))
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	serve.ListenAndServe(mux, "38182")
}
