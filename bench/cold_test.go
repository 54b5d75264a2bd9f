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
// L2 of the core (inproc.CacheSize), which leaves the request's lines in L3,
// and twice the L3, so that the request reads them from memory. When sysfs
// does not describe the caches, those of the project machine on 2026-12-04
// (512 KiB and 8 MiB) stand in.
func evictions() []eviction {
	l2, l3 := inproc.CacheSize(2), inproc.CacheSize(3)
	if l2 == 0 {
		l2 = 512 << 10
	}
	if l3 == 0 {
		l3 = 8 << 20
	}
	return []eviction{{"l2", 2 * l2}, {"memory", 2 * l3}}
}

// eviction is one size of the buffer walked between requests.
type eviction struct {
	name string
	size int
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
	// The run says what it evicted: the caches differ between hosts.
	b.ReportMetric(float64(len(buf)>>10), "evicted-KiB")
}

// BenchmarkCold is tools/call on cold caches, wymcp beside the bare handler.
func BenchmarkCold(b *testing.B) {
	for _, e := range evictions() {
		buf := make([]byte, e.size)
		b.Run("wymcp/"+e.name, func(b *testing.B) { cold(b, newServer(b).ServeHTTP, buf) })
		b.Run("bare/"+e.name, func(b *testing.B) { cold(b, bareh.Handler, buf) })
	}
}
