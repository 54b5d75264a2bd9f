package upstream_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// legacyUp is a fake upstream of the 2025 era (2025-11-25) over
// Streamable HTTP, for the tests of its sessions, its GET change stream
// and its SSE framing (changes_test.go, redteam41_test.go,
// priming_test.go): one fake, so that each test states only how its
// server differs. As the era's servers do, it refuses server/discover
// (400, the TypeScript SDK's "Server not initialized"), makes a session at
// each initialize ("s1", "s2", …), answers a request in a session it does
// not know as lost (404), answers tools/list, ping and tools/call, takes
// notifications and answers 202, and a DELETE 204. A GET is the change
// stream, served when it advertises tools.listChanged (405 otherwise).
//
// The hooks are set before start; the counters and channels are read by
// the test while it serves.
type legacyUp struct {
	// listChanged advertises tools.listChanged and serves the GET stream.
	listChanged bool
	// getStatus, when not 0, answers every GET with that status and no
	// stream, whatever the session (an HTTP router with no route for it).
	getStatus int
	// primed answers every request with a text/event-stream that opens
	// with a priming event (an id and an empty data field), as a server
	// that can resume its streams does.
	primed bool
	// lost answers a request in a session it does not know; nil: 404.
	lost ocHandler
	// call answers tools/call; nil: the text "hi".
	call ocHandler

	URL    string
	opened chan string   // the session of each GET stream, once open
	listed chan int32    // each tools/list's number, once answered
	events chan []string // messages for the open GET stream, written at once
	gets   atomic.Int32  // GET requests received

	tools atomic.Value // string: the tools array of tools/list
	lists atomic.Int32

	mu    sync.Mutex
	made  int             // sessions made
	known map[string]bool // sessions it knows
}

// start serves f on 127.0.0.1 until the test ends. Its tools are the one
// tool "t", unless setTools was called first.
func (f *legacyUp) start(t testing.TB) *legacyUp {
	t.Helper()
	f.opened = make(chan string, 16)
	f.listed = make(chan int32, 64)
	f.events = make(chan []string)
	f.known = map[string]bool{}
	if f.tools.Load() == nil {
		f.setTools(`[{"name":"t","inputSchema":{"type":"object"}}]`)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// setTools sets the tools array tools/list answers from now on.
func (f *legacyUp) setTools(array string) { f.tools.Store(array) }

// forget drops every session, as a server that restarted.
func (f *legacyUp) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.known)
}

// sessions is how many sessions it made.
func (f *legacyUp) sessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.made
}

// tell writes the messages on the open GET stream, in one flush; it waits
// for a stream to take them.
func (f *legacyUp) tell(msgs ...string) { f.events <- msgs }

func (f *legacyUp) knows(sid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[sid]
}

func (f *legacyUp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodGet:
		f.gets.Add(1)
		f.stream(w, r, sid)
		return
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
		return
	}
	id := string(m.ID)
	switch {
	case m.Method == "server/discover":
		ocWrite(w, http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
	case m.Method == "initialize":
		f.mu.Lock()
		f.made++
		sid := "s" + strconv.Itoa(f.made)
		f.known[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		caps := `{"tools":{}}`
		if f.listChanged {
			caps = `{"tools":{"listChanged":true}}`
		}
		f.result(w, id, `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"legacy","version":"1"}}`)
	case !f.knows(sid):
		f.lostAnswer(w, r, id, body)
	case m.ID == nil || m.Method == "":
		w.WriteHeader(http.StatusAccepted) // a notification, or an answer of the gateway's
	case m.Method == "tools/list":
		f.result(w, id, `{"tools":`+f.tools.Load().(string)+`}`)
		select {
		case f.listed <- f.lists.Add(1):
		default:
		}
	case m.Method == "ping":
		f.result(w, id, `{}`)
	case m.Method == "tools/call":
		if f.call != nil {
			f.call(w, r, id, body)
			return
		}
		f.result(w, id, `{"content":[{"type":"text","text":"hi"}]}`)
	default:
		ocWrite(w, http.StatusOK, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found"}}`)
	}
}

// result answers the request id with the result object res.
func (f *legacyUp) result(w http.ResponseWriter, id, res string) {
	msg := `{"jsonrpc":"2.0","id":` + id + `,"result":` + res + `}`
	if !f.primed {
		ocWrite(w, http.StatusOK, msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "id: prime-1\ndata: \n\nevent: message\nid: 2\ndata: "+msg+"\n\n")
}

// lostAnswer answers a request in a session it does not know.
func (f *legacyUp) lostAnswer(w http.ResponseWriter, r *http.Request, id string, body []byte) {
	if f.lost != nil {
		f.lost(w, r, id, body)
		return
	}
	http.Error(w, "no such session", http.StatusNotFound)
}

// stream serves a GET: the change stream, open until the request ends,
// carrying what tell gives it.
func (f *legacyUp) stream(w http.ResponseWriter, r *http.Request, sid string) {
	switch {
	case f.getStatus != 0:
		http.Error(w, http.StatusText(f.getStatus), f.getStatus)
		return
	case !f.knows(sid):
		f.lostAnswer(w, r, "", nil)
		return
	case !f.listChanged:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case r.Header.Get("Accept") != "text/event-stream":
		http.Error(w, "bad GET", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
	select {
	case f.opened <- sid:
	default:
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case msgs := <-f.events:
			for _, m := range msgs {
				_, _ = io.WriteString(w, "event: message\ndata: "+m+"\n\n")
			}
			_ = http.NewResponseController(w).Flush()
		}
	}
}
