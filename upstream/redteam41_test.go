package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// Issue 41's red team: an upstream's change stream when it misbehaves.

// TestWatchRenewsLostSessionForStream: a 2025 upstream that lost the
// gateway's session (it restarted) answers the GET stream 404. The
// gateway finds the session lost (a ping in it is 404 too), makes a new
// one as a call that finds its session lost does, and follows the stream
// in it; it once asked again in the lost session, 404 after 404, until a
// poll (an hour here) made a new one, and no change was told meanwhile.
func TestWatchRenewsLostSessionForStream(t *testing.T) {
	t.Parallel()
	f := (&legacyUp{listChanged: true}).start(t)
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "forgetful", URL: f.URL, Prefix: "f_", Refresh: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	f.forget()
	watchNames(t, u)
	select {
	case sid := <-f.opened:
		if sid != "s2" {
			t.Errorf("the stream opened in session %q, want the new s2", sid)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no GET stream opened: the lost session was never renewed for it")
	}
}

// TestWatchNoGetRouteKeepsSession: a 2025 upstream that answers its GET
// 404 whatever the session (it has no route for it), and answers a ping
// in the session, offers no stream: it is polled alone, its session kept,
// not replaced at each try.
func TestWatchNoGetRouteKeepsSession(t *testing.T) {
	t.Parallel()
	f := (&legacyUp{listChanged: true, getStatus: http.StatusNotFound}).start(t)
	logs := &syncLog{}
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "noget", URL: f.URL, Prefix: "n_", Refresh: time.Hour, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	watchNames(t, u)
	for deadline := time.Now().Add(30 * time.Second); !logs.has("upstream offers no change stream"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the GET 404 was not taken for no stream:\n%s", logs.String())
		}
	}
	if sessions, gets := f.sessions(), f.gets.Load(); sessions != 1 || gets != 1 {
		t.Errorf("%d sessions and %d GETs, want 1 and 1", sessions, gets)
	}
}

// syncLog is a log sink safe for concurrent use.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *syncLog) has(s string) bool { return strings.Contains(l.String(), s) }

// flapping answers as a 2026-07-28 server that advertises
// tools.listChanged, in process (an http.RoundTripper: no network, so a
// synctest bubble's clock runs it), and whose listen is acknowledged and
// ended at once, every time: a broken upstream, or one in a drain that
// never ends.
type flapping struct {
	// lives is how long each stream lasts between its ack and its end.
	lives time.Duration
	mu    sync.Mutex
	count map[string]int
}

// after yields r once d has passed.
type after struct {
	d     time.Duration
	slept bool
	r     io.Reader
}

func (a *after) Read(p []byte) (int, error) {
	if !a.slept {
		a.slept = true
		time.Sleep(a.d)
	}
	return a.r.Read(p)
}

func (f *flapping) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	f.mu.Lock()
	f.count[m.Method]++
	f.mu.Unlock()
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	var text string
	switch m.Method {
	case "server/discover":
		text = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"flapping","version":"1"}}}`, m.ID)
	case "tools/list":
		text = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"one","inputSchema":{"type":"object"}}]}}`, m.ID)
	case "subscriptions/listen":
		resp.Header.Set("Content-Type", "text/event-stream")
		ack := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s},"notifications":{"toolsListChanged":true}}}`, m.ID)
		end := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete"}}`, m.ID)
		resp.Body = io.NopCloser(io.MultiReader(strings.NewReader("event: message\ndata: "+ack+"\n\n"),
			&after{d: f.lives, r: strings.NewReader("event: message\ndata: " + end + "\n\n")}))
		return resp, nil
	default:
		resp.StatusCode = http.StatusNotFound
		text = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID)
	}
	resp.Header.Set("Content-Type", "application/json")
	resp.Body = io.NopCloser(strings.NewReader(text))
	resp.ContentLength = int64(len(text))
	return resp, nil
}

func (f *flapping) n(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[method]
}

// TestStreamEndingAtOnceBacksOff: an upstream whose listen is acknowledged
// and ended at once, again and again, is listened to again with the
// backoff doubling to 30 s, as one that fails: a stream that served no
// while does not start the backoff afresh. It once did at every
// acknowledgement, so that such an upstream cost a listen and a
// tools/list (the read at each opening) every second, forever.
func TestStreamEndingAtOnceBacksOff(t *testing.T) {
	for _, c := range []struct {
		name          string
		lives, window time.Duration
		listens       int
	}{
		// Opened at 0 s, then after 1, 2, 4, 8, 16, 30 and 30 s: at 1, 3,
		// 7, 15, 31, 61 and 91 s.
		{"at once", 0, 100 * time.Second, 8},
		// A stream that served 40 s is opened again a second after its
		// end: at 0, 41, 82, 123 and 164 s.
		{"after serving", 40 * time.Second, 170 * time.Second, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &flapping{lives: c.lives, count: map[string]int{}}
				u, err := upstream.Connect(t.Context(), upstream.Options{
					Name: "flapping", URL: "http://127.0.0.1:9/mcp", Prefix: "f_", Refresh: time.Hour,
					HTTPClient: &http.Client{Transport: f}, Logger: slog.New(slog.DiscardHandler),
				})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() {
					defer close(done)
					u.Watch(ctx, func([]*tools.Tool) {})
				}()
				time.Sleep(c.window)
				cancel()
				<-done
				_ = u.Close()
				if n := f.n("subscriptions/listen"); n != c.listens {
					t.Errorf("%d listens in %v, want %d", n, c.window, c.listens)
				}
				// Connect's read, and one at each opening.
				if n := f.n("tools/list"); n != c.listens+1 {
					t.Errorf("%d tools/list in %v, want %d", n, c.window, c.listens+1)
				}
			})
		})
	}
}
