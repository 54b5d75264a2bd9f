package upstream_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

// Issue 41's red team: an upstream's change stream when it misbehaves.

// forgetful is a 2025-11-25 server that advertises tools.listChanged and
// can forget its sessions (a restart): a request in a session it does not
// know is answered 404, as the era says, until the client initializes
// again. Each GET stream it opens is reported on opened, by its session.
type forgetful struct {
	mu      sync.Mutex
	n       int
	current string
	opened  chan string
}

func (s *forgetful) session() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// forget drops every session.
func (s *forgetful) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = ""
}

func (s *forgetful) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodGet {
		if sid == "" || sid != s.session() {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.opened <- sid
		<-r.Context().Done()
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	var result string
	switch m.Method {
	case "server/discover":
		http.Error(w, "unknown", http.StatusBadRequest)
		return
	case "initialize":
		s.mu.Lock()
		s.n++
		s.current = "s" + strconv.Itoa(s.n)
		w.Header().Set("Mcp-Session-Id", s.current)
		s.mu.Unlock()
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"forgetful","version":"1"}}`
	default:
		if sid != s.session() {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		if m.Method != "tools/list" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result = `{"tools":[{"name":"one","inputSchema":{"type":"object"}}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
}

// TestWatchRenewsLostSessionForStream: a 2025 upstream that lost the
// gateway's session (it restarted) answers the GET stream 404. The
// gateway makes a new session and follows the stream in it, as a call
// that finds its session lost does; it once asked again in the lost
// session, 404 after 404, until a poll (an hour here) made a new one, and
// no change was told meanwhile.
func TestWatchRenewsLostSessionForStream(t *testing.T) {
	t.Parallel()
	s := &forgetful{opened: make(chan string, 8)}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	u, err := upstream.Connect(t.Context(), upstream.Options{Name: "forgetful", URL: hs.URL, Prefix: "f_", Refresh: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	s.forget()
	watchNames(t, u)
	select {
	case sid := <-s.opened:
		if sid != "s2" {
			t.Errorf("the stream opened in session %q, want the new s2", sid)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no GET stream opened: the lost session was never renewed for it")
	}
}
