// Command bare-ballast is the bare handler (package bareh) with BALLAST_KB
// KiB of pointer-rich live heap held for the life of the process. It is an
// experiment, not a peer: run side by side with the bare handler (cmd/tail),
// it shows how much latency tail a live heap of that size makes by itself,
// with no other work per request (bench/README.md, "Where the tail comes
// from").
package main

import (
	"net/http"
	"os"
	"strconv"

	"github.com/wymcp/wymcp/bench/bareh"
	"github.com/wymcp/wymcp/bench/serve"
)

// node is 64 bytes with three pointers, so that the collector has to follow
// pointers through the ballast as it does through a real program's heap (a
// []byte would be skipped as pointer-free).
type node struct {
	next, a, b *node
	_          [5]uintptr
}

// ballast keeps the chain reachable: a package-level root, as the globals
// of a library would be.
var ballast []*node

func main() {
	kib, _ := strconv.Atoi(os.Getenv("BALLAST_KB"))
	var prev *node
	for range kib * 1024 / 64 {
		n := &node{next: prev, a: prev, b: prev}
		ballast = append(ballast, n)
		prev = n
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", bareh.Handler)
	serve.ListenAndServe(mux, "38183")
}
