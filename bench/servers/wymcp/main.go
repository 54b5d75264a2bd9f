// Command wymcp serves the bench echo tool with the wymcp library on
// 127.0.0.1:$PORT/mcp. With PPROF_ADDR set it also serves net/http/pprof
// there (a side listener, never on the measured one).
package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	_ "net/http/pprof" // registered on http.DefaultServeMux, served only on PPROF_ADDR
	"os"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/bench/serve"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// echoSchema is the schema of cmd/wymcp's demo echo.
const echoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"Text to echo back"}},"required":["text"],"additionalProperties":false}`

func echo(_ context.Context, args protocol.RawJSON) (*protocol.CallToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := protocol.Unmarshal(args, &in); err != nil {
		return nil, errors.New("arguments cannot be decoded")
	}
	return protocol.TextResult(in.Text), nil
}

func main() {
	tool, err := tools.NewRaw("echo", "Echoes the given text back as one text block.", []byte(echoSchema), echo)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := wymcp.New(wymcp.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, nil, tool)
	if err != nil {
		log.Fatal(err)
	}
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		go func() { log.Println(http.ListenAndServe(addr, http.DefaultServeMux)) }()
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv)
	serve.ListenAndServe(mux, "38180")
}
