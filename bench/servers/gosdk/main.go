// Command gosdk serves the bench echo tool with the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0) in its stateless mode:
// StreamableHTTPHandler{Stateless: true, JSONResponse: true}.
package main

import (
	"context"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	serve(mux)
}

func serve(h http.Handler) {
	port := os.Getenv("PORT")
	if port == "" {
		port = "38181"
	}
	hs := &http.Server{Addr: "127.0.0.1:" + port, Handler: h}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		<-c
		hs.Close()
	}()
	if err := hs.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
