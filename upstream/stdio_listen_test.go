package upstream_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// listenOpts is a 2026-07-28 fake child that advertises tools.listChanged
// and serves subscriptions/listen, logging each listen it opens, refuses
// and ends to the file it returns (stdio_fake_test.go). Refresh is an
// hour: a change read sooner was told, not polled.
func listenOpts(t *testing.T) (upstream.Options, string) {
	t.Helper()
	o := stdioOpts(t, "modern")
	file := filepath.Join(t.TempDir(), "listens")
	o.Env["WYMCP_FAKE_LISTCHANGED"] = "1"
	o.Env["WYMCP_FAKE_LISTENS"] = file
	o.Refresh = time.Hour
	o.CallTimeout = time.Minute
	return o, file
}

// listenLines waits until the child's listen log has a line starting
// with kind for the n-th time, and returns every line of that kind.
func listenLines(t *testing.T, file, kind string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(file)
		var got []string
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, kind+" ") {
				got = append(got, line)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child logged %q, waiting for %d %q", data, n, kind)
		}
		time.Sleep(5 * time.Millisecond) // another process's file: nothing to wait on
	}
}

// watch runs u.Watch until the test ends, its publishes' tool counts on
// the returned channel; stop ends it, and returns once Watch has.
func watch(t *testing.T, u *upstream.Upstream) (counts <-chan int, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan int, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.Watch(ctx, func(ts []*tools.Tool) { ch <- len(ts) })
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return ch, stop
}

// waitCount waits for a publish of n tools.
func waitCount(t *testing.T, counts <-chan int, n int) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-counts:
			if got == n {
				return
			}
		case <-timeout:
			t.Fatalf("no publish of %d tools", n)
		}
	}
}

// A 2026-07-28 child tells its changes on a subscriptions/listen alone:
// the gateway opens one on it (asking for toolsListChanged), a change told
// on it has Watch read the list at once (Refresh is an hour), a restarted
// child is listened to afresh, and Watch's end ends the listen
// (notifications/cancelled naming it).
func TestStdioListen(t *testing.T) {
	t.Parallel()
	o, file := listenOpts(t)
	g := newOCGateway(t, nil, o)
	u := g.ups[0]
	counts, stop := watch(t, u)
	first := listenLines(t, file, "listen", 1)[0]
	// The read at its acknowledgement (the only one Watch is asked for
	// until the next change is told) is over: a read of the change can
	// only be the list_changed's.
	for {
		lines := listenLines(t, file, "list", 1)
		data, _ := os.ReadFile(file)
		if strings.LastIndex(string(data), "list -") > strings.Index(string(data), first+"\n") {
			break
		}
		listenLines(t, file, "list", len(lines)+1)
	}

	ocExpectText(t, stdioCall(t, g, "g_announce", `{}`), "announced", false)
	waitCount(t, counts, 16)

	// A new child lists its own tools (no extra), read at its start, and
	// is listened to: its change is told too.
	starts := upstream.WatchStdioStarts(u)
	ocToolError(t, stdioCall(t, g, "g_crash", `{}`), stdioExited("fake"))
	<-starts
	waitCount(t, counts, 15)
	second := listenLines(t, file, "listen", 2)[1]
	if second == first {
		t.Fatalf("the new child's listen has the first's id: %s", second)
	}
	ocExpectText(t, stdioCall(t, g, "g_announce", `{}`), "announced", false)
	waitCount(t, counts, 16)

	stop()
	ended := listenLines(t, file, "ended", 1)
	if want := "ended " + strings.TrimPrefix(second, "listen "); ended[0] != want {
		t.Fatalf("the child read %q, want %q", ended, want)
	}
	if got := listenLines(t, file, "listen", 2); len(got) != 2 {
		t.Fatalf("listens %q", got)
	}
}

// A child that advertises tools.listChanged but answers its listen
// -32601 offers no change stream: it is asked once, not again and again,
// and its tools are polled (Refresh).
func TestStdioListenRefused(t *testing.T) {
	t.Parallel()
	o, file := listenOpts(t)
	o.Env["WYMCP_FAKE_NOLISTEN"] = "1"
	o.Refresh = 50 * time.Millisecond
	log := &recordLog{}
	o.Logger = slog.New(log)
	g := newOCGateway(t, nil, o)
	counts, _ := watch(t, g.ups[0])
	log.wait(t, "upstream offers no change stream")
	ocExpectText(t, stdioCall(t, g, "g_announce", `{}`), "announced", false)
	waitCount(t, counts, 16)
	if got := listenLines(t, file, "refused", 1); len(got) != 1 {
		t.Fatalf("the child was asked to listen %d times: %q", len(got), got)
	}
	data, _ := os.ReadFile(file)
	if strings.Contains(string(data), "listen ") {
		t.Fatalf("the child logged %q", data)
	}
}

// With the gateway's listen open on the child, a call that is the only
// one in flight still has the child's elicitation relayed to its client:
// the listen is no call whose it could be.
func TestStdioListenElicitation(t *testing.T) {
	t.Parallel()
	o, file := listenOpts(t)
	u := rtConnect(t, o)
	watch(t, u)
	listenLines(t, file, "listen", 1)
	g := rtServe(t, &wymcp.Options{Versions: []string{"2026-07-28", "2025-11-25"}}, u.Tools())
	asked := 0
	res := rtLegacyCall(t, g.URL, "g_ask", `{}`, func(method string, params json.RawMessage) string {
		asked++
		return `{"action":"accept","content":{"name":"Ada"}}`
	})
	if text, isErr := rtLegacyText(t, res); text != `{"action":"accept","content":{"name":"Ada"}}` || isErr || asked != 1 {
		t.Fatalf("answer %q (isError %v), asked %d times", text, isErr, asked)
	}
}

// A child that acknowledges each listen and ends it at once is listened
// to again with changes.go's backoff, as an HTTP upstream's stream is:
// 1 s, then 2 s (a stream that served a moment does not reset it), not a
// listen and a read each second.
func TestStdioListenEndedBacksOff(t *testing.T) {
	t.Parallel()
	o, file := listenOpts(t)
	o.Env["WYMCP_FAKE_LISTENEND"] = "1"
	log := &recordLog{}
	o.Logger = slog.New(log)
	g := newOCGateway(t, nil, o)
	watch(t, g.ups[0])
	listenLines(t, file, "listen", 3)
	var waits []string
	log.mu.Lock()
	for _, r := range log.recs {
		if strings.HasPrefix(r.Message, "upstream change stream ended") {
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "retry_in" {
					waits = append(waits, a.Value.String())
				}
				return true
			})
		}
	}
	log.mu.Unlock()
	if len(waits) < 2 || waits[0] != "1s" || waits[1] != "2s" {
		t.Fatalf("the listen was opened again after %q, want 1s then 2s", waits)
	}
}
