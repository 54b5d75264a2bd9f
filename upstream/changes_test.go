package upstream_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The upstream's change stream (docs/design.md §10e): Watch reads the
// list at once when the upstream tells of a change, and polls on when the
// stream fails.

// changeTool is a tool named name.
func changeTool(name string) *tools.Tool {
	return tools.Must(tools.New(name, "A tool.", func(context.Context, struct{}) (string, error) { return name, nil }))
}

// watchNames runs u's Watch until the test ends and sends the names of
// each new set on the channel returned.
func watchNames(t *testing.T, u *upstream.Upstream) <-chan []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sets := make(chan []string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.Watch(ctx, func(ts []*tools.Tool) {
			var names []string
			for _, tl := range ts {
				names = append(names, tl.Name())
			}
			sets <- names
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return sets
}

// nextSet waits for the next set Watch reports.
func nextSet(t *testing.T, sets <-chan []string) []string {
	t.Helper()
	select {
	case s := <-sets:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("Watch reported no change")
		return nil
	}
}

// counting serves h and counts its requests by Mcp-Method (or HTTP
// method for a GET), optionally refusing subscriptions/listen.
type counting struct {
	mu     sync.Mutex
	counts map[string]int
	refuse atomic.Bool
	h      http.Handler
	seen   chan string
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := r.Header.Get("Mcp-Method")
	if r.Method == http.MethodGet {
		m = "GET"
	}
	c.mu.Lock()
	c.counts[m]++
	c.mu.Unlock()
	select {
	case c.seen <- m:
	default:
	}
	if m == "subscriptions/listen" && c.refuse.Load() {
		http.Error(w, "no", http.StatusInternalServerError)
		return
	}
	c.h.ServeHTTP(w, r)
}

func (c *counting) count(m string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[m]
}

// TestWatchFollowsListen: a 2026-07-28 upstream that advertises
// tools.listChanged is followed on its subscriptions/listen: a change it
// tells is read at once, though the refresh interval is an hour.
func TestWatchFollowsListen(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(protocol.Implementation{Name: "changing", Version: "1"}, &wymcp.Options{ToolsChange: true}, changeTool("one"))
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{counts: map[string]int{}, h: srv, seen: make(chan string, 64)}
	hs := httptest.NewServer(c)
	t.Cleanup(hs.Close)
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "changing", URL: hs.URL, Prefix: "c_", Refresh: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	sets := watchNames(t, u)
	// The stream is open (it is read once at its opening, which finds
	// nothing new) before the change.
	for m := ""; m != "subscriptions/listen"; {
		m = <-c.seen
	}
	for c.count("tools/list") < 2 {
		<-c.seen
	}
	if err := srv.SetTools(changeTool("one"), changeTool("two")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(nextSet(t, sets)); got != "[c_one c_two]" {
		t.Errorf("after the change: %s", got)
	}
	if n := c.count("subscriptions/listen"); n != 1 {
		t.Errorf("%d listens, want 1 (the stream stays open)", n)
	}
}

// TestWatchPollsWhenStreamFails: an upstream that advertises
// tools.listChanged but fails its listen is polled all the same, and its
// stream is tried again (with backoff).
func TestWatchPollsWhenStreamFails(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(protocol.Implementation{Name: "failing", Version: "1"}, &wymcp.Options{ToolsChange: true}, changeTool("one"))
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{counts: map[string]int{}, h: srv, seen: make(chan string, 64)}
	c.refuse.Store(true)
	hs := httptest.NewServer(c)
	t.Cleanup(hs.Close)
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "failing", URL: hs.URL, Prefix: "f_", Refresh: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	sets := watchNames(t, u)
	if err := srv.SetTools(changeTool("one"), changeTool("two")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(nextSet(t, sets)); got != "[f_one f_two]" {
		t.Errorf("polled: %s", got)
	}
	for c.count("subscriptions/listen") < 2 {
		<-c.seen // tried again after its backoff
	}
}

// TestWatchFollowsLegacyStream: a 2025-era upstream that advertises
// tools.listChanged is followed on its GET stream, in its session; a
// list_changed on it is read at once, though the refresh interval is an
// hour.
func TestWatchFollowsLegacyStream(t *testing.T) {
	t.Parallel()
	f := &legacyUp{listChanged: true}
	f.setTools(`[{"name":"one","inputSchema":{"type":"object"}}]`)
	f.start(t)
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "legacy", URL: f.URL, Prefix: "l_", Refresh: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	if u.Version() != "2025-11-25" {
		t.Fatalf("negotiated %s", u.Version())
	}
	sets := watchNames(t, u)
	<-f.opened
	// The list read at the stream's opening (Connect's was the first) is
	// answered before the change, so only the stream can tell of it.
	for n := int32(0); n < 2; {
		n = <-f.listed
	}
	f.setTools(`[{"name":"one","inputSchema":{"type":"object"}},{"name":"two","inputSchema":{"type":"object"}}]`)
	// A request of the server's own comes first: skipped.
	f.tell(`{"jsonrpc":"2.0","id":"p1","method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if got := fmt.Sprint(nextSet(t, sets)); got != "[l_one l_two]" {
		t.Errorf("after the change: %s", got)
	}
	if n := f.gets.Load(); n != 1 {
		t.Errorf("%d GET streams, want 1", n)
	}
}
