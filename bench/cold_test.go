package bench_test

// Cold-cache benchmarks: tools/call through wymcp and through the bare
// handler when the request finds its code and data out of the caches, as it
// does on a core that sat idle between requests (one connection: the
// kernel's network stack, the idle loop and, on a VM, the host's other work
// run in between). BenchmarkWymcp runs the same request back to back, with
// everything cached, which is what a loaded core sees instead.
//
//	cd bench && taskset -c 0 go test -run '^$' -bench Cold -cpu 1 -count 5
//
// The metric that matters is cold-ns/req, the handler's own time; ns/op
// also counts the eviction.

import (
	"net/http"
	"testing"
	"time"

	"github.com/wymcp/wymcp/bench/bareh"
	"github.com/wymcp/wymcp/bench/inproc"
)

// evictions are the sizes of the buffer walked between requests: twice the
// L2 of one of the project machine's cores (512 KiB), which leaves the
// request's lines in L3, and twice its L3 (8 MiB), so that the request
// reads them from memory.
var evictions = []struct {
	name string
	size int
}{
	{"l2", 1 << 20},
	{"memory", 16 << 20},
}

// cold serves tools/call once per iteration after evicting buf, and reports
// the handler's own time as cold-ns/req.
func cold(b *testing.B, serve http.HandlerFunc, buf []byte) {
	c := cases[2]
	r, rewind := newRequest(c)
	w := inproc.NewSink()
	var spent time.Duration
	n := 0
	for b.Loop() {
		inproc.EvictCaches(buf)
		rewind()
		w.Reset()
		t := time.Now()
		serve(w, r)
		spent += time.Since(t)
		n++
	}
	check(b, c, w)
	b.ReportMetric(float64(spent.Nanoseconds())/float64(n), "cold-ns/req")
}

// BenchmarkCold is tools/call on cold caches, wymcp beside the bare handler.
func BenchmarkCold(b *testing.B) {
	for _, e := range evictions {
		buf := make([]byte, e.size)
		b.Run("wymcp/"+e.name, func(b *testing.B) { cold(b, newServer(b).ServeHTTP, buf) })
		b.Run("bare/"+e.name, func(b *testing.B) { cold(b, bareh.Handler, buf) })
	}
}
