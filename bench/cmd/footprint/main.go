// Command footprint serves the bench's tools/call in process, -n times,
// to wymcp, to the bare handler or to a handler that only writes a canned
// answer ("none"), each time after emptying the L1 data cache, for
// valgrind's callgrind to count what the requests execute and which of it
// misses the L1 caches. It serves -warm requests first, so that start-up
// and first-use work is done before the counted ones.
//
// bench/footprint.sh runs each handler at two values of -n under callgrind
// and divides the difference by the difference in requests, after taking
// off the same difference for "none": what is left is the handler's own
// count per request. Counting the whole run and subtracting, rather than
// collecting only inside the handler, is deliberate: callgrind follows
// threads, not goroutines, and when a request switches goroutines its
// collection can stay on through the eviction loop.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/bench/bareh"
	"github.com/wymcp/wymcp/bench/echotool"
	"github.com/wymcp/wymcp/bench/inproc"
	"github.com/wymcp/wymcp/bench/loadgen"
	"github.com/wymcp/wymcp/protocol"
)

func main() {
	n := flag.Int("n", 200, "measured requests")
	warm := flag.Int("warm", 100, "requests served before the measured ones")
	flag.Parse()
	var serve http.HandlerFunc
	switch flag.Arg(0) {
	case "wymcp":
		srv, err := wymcp.New(protocol.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, nil, echotool.New())
		if err != nil {
			fail(err)
		}
		defer srv.Shutdown(context.Background())
		serve = srv.ServeHTTP
	case "bare":
		serve = bareh.Handler
	case "none":
		serve = func(w http.ResponseWriter, _ *http.Request) { w.Write(loadgen.EchoExpect) }
	default:
		fail(fmt.Errorf("usage: footprint [-n N] [-warm N] wymcp|bare|none"))
	}
	r, rewind := inproc.Request("tools/call", "echo", loadgen.BodyM)
	w := inproc.NewSink()
	evict := make([]byte, 64<<10) // twice the L1 data cache callgrind simulates
	for i := range *warm + *n {
		if i >= *warm {
			inproc.EvictCaches(evict)
		}
		rewind()
		w.Reset()
		serve(w, r)
	}
	if w.Status != http.StatusOK || !strings.Contains(string(w.Body), string(loadgen.EchoExpect)) {
		fail(fmt.Errorf("unexpected answer: %d %s", w.Status, w.Body))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "footprint:", err)
	os.Exit(2)
}
