// Command wymcp serves the bench echo tool with the wymcp library on
// 127.0.0.1:$PORT/mcp. With PPROF_ADDR set it also serves net/http/pprof
// there (a side listener, never on the measured one).
package main

import (
	"log"
	"net/http"
	_ "net/http/pprof" // registered on http.DefaultServeMux, served only on PPROF_ADDR
	"os"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/bench/echotool"
	"github.com/wymcp/wymcp/bench/serve"
	"github.com/wymcp/wymcp/protocol"
)

func main() {
	srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, nil, echotool.New())
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
