// Command footprint serves the bench's tools/call in process to wymcp or to
// the bare handler, for valgrind's callgrind to count what one request
// executes and which of it misses the L1 caches. It serves the request
// warm first (start-up and first-use work done), then -n more times, each
// after emptying the L1 data cache, through the one function measured, so
// that callgrind counts only inside it:
//
//	valgrind --tool=callgrind --cache-sim=yes --toggle-collect=main.measured footprint wymcp
//
// bench/footprint.sh runs both and prints the counts per request. Unlike a
// timing, callgrind's counts do not move with the machine: they are the
// measure of how much code and data a request touches.
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
)

func main() {
	n := flag.Int("n", 200, "measured requests")
	warm := flag.Int("warm", 100, "requests served before the measured ones")
	flag.Parse()
	var serve http.HandlerFunc
	switch flag.Arg(0) {
	case "wymcp":
		srv, err := wymcp.New(wymcp.Implementation{Name: "echo-wymcp", Version: "1.0.0"}, nil, echotool.New())
		if err != nil {
			fail(err)
		}
		defer srv.Shutdown(context.Background())
		serve = srv.ServeHTTP
	case "bare":
		serve = bareh.Handler
	default:
		fail(fmt.Errorf("usage: footprint [-n N] wymcp|bare"))
	}
	r, rewind := inproc.Request("tools/call", "echo", loadgen.BodyM)
	w := inproc.NewSink()
	evict := make([]byte, 1<<20) // 32 times the L1 data cache callgrind simulates
	for i := range *warm + *n {
		rewind()
		w.Reset()
		if i < *warm {
			serve(w, r)
			continue
		}
		for j := 0; j < len(evict); j += 64 {
			evict[j]++
		}
		measured(serve, w, r)
	}
	if w.Status != http.StatusOK || !strings.Contains(string(w.Body), string(loadgen.EchoExpect)) {
		fail(fmt.Errorf("unexpected answer: %d %s", w.Status, w.Body))
	}
}

// measured is the one call callgrind counts (--toggle-collect=main.measured).
//
//go:noinline
func measured(serve http.HandlerFunc, w http.ResponseWriter, r *http.Request) { serve(w, r) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "footprint:", err)
	os.Exit(2)
}
