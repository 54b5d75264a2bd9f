package wymcp_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
)

// TestDeclaredBodiesHoldNoMemory: hundreds of connections that declare the
// largest body allowed and send none of it hold a few KiB each, not the
// length they declared: a body's buffer grows as its bytes arrive
// (docs/design.md §3, stage 1). With auth and without: the body is read
// before anyone is authenticated, so no token changes what it may take.
func TestDeclaredBodiesHoldNoMemory(t *testing.T) {
	for _, withAuth := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth=%v", withAuth), func(t *testing.T) {
			opts := &wymcp.Options{Logger: slog.New(slog.DiscardHandler)}
			if withAuth {
				opts.Auth = &wymcp.AuthOptions{Authenticator: wymcp.AuthenticatorFunc(fakeAuthenticator)}
			}
			srv, err := wymcp.New(protocol.Implementation{Name: "memory", Version: "1"}, opts, testTools(t, nil)...)
			if err != nil {
				t.Fatal(err)
			}
			var entered atomic.Int64
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered.Add(1)
				srv.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)

			const conns = 300
			before, rssBefore := heapInUse(), residentKiB()
			var open []net.Conn
			t.Cleanup(func() {
				for _, c := range open {
					c.Close()
				}
			})
			head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", hs.Listener.Addr(), (4 << 20))
			for range conns {
				c, err := net.Dial("tcp", hs.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				open = append(open, c)
				if _, err := io.WriteString(c, head+`{"jsonrpc":`); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for entered.Load() < conns && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := entered.Load(); n < conns {
				t.Fatalf("only %d of %d requests reached the handler", n, conns)
			}
			// Each handler is now reading its body, or about to.
			time.Sleep(100 * time.Millisecond)
			grown := int64(heapInUse()) - int64(before)
			rssGrown := residentKiB() - rssBefore
			t.Logf("%d connections declaring %d bytes each and sending 11: heap +%.1f MiB, RSS +%.1f MiB", conns, (4 << 20), float64(grown)/(1<<20), float64(rssGrown)/(1<<10))
			// net/http's own buffers and a few KiB of body each: a few MiB
			// in all, where a buffer of the declared length took 1.2 GiB.
			if limit := int64(12 << 20); grown > limit {
				t.Errorf("the heap grew by %d bytes, over %d", grown, limit)
			}
			// The process's resident memory too, where /proc tells it: the
			// heap, the goroutines' stacks and the runtime's own, with the
			// client side of the connections in the same process.
			if limit := int64(24 << 10); rssBefore > 0 && rssGrown > limit {
				t.Errorf("the resident set grew by %d KiB, over %d", rssGrown, limit)
			}
		})
	}
}

// residentKiB is the process's resident set (VmRSS) in KiB, 0 where
// /proc/self/status cannot tell it.
func residentKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib
		}
	}
	return 0
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
