// Command gosdk serves the bench echo tool with the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0) in its stateless mode:
// StreamableHTTPHandler{Stateless: true, JSONResponse: true}.
package main

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wymcp/wymcp/bench/serve"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"Text to echo back"`
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "echo-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echoes the given text back as one text block."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	serve.ListenAndServe(mux, "38181")
}
