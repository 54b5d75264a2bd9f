// Command bare serves the bench's ceiling handler (package bareh) on
// 127.0.0.1:$PORT/mcp.
package main

import (
	"net/http"

	"github.com/wymcp/wymcp/bench/bareh"
	"github.com/wymcp/wymcp/bench/serve"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", bareh.Handler)
	serve.ListenAndServe(mux, "38183")
}
