package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

// TestPrimingEvent: a 2025-11-25 server that can resume its streams (the
// TypeScript SDK's, given an event store, as
// @modelcontextprotocol/server-everything is) opens every SSE answer with
// a priming event, an id and an empty data field (the 2025-11-25
// transport: "to prime the client to reconnect"). The gateway connects,
// lists and calls through it.
func TestPrimingEvent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
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
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
			return
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"primed","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"hi"}]}`
		default: // notifications/initialized
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "id: prime-1\ndata: \n\nevent: message\nid: 2\ndata: {\"result\":%s,\"jsonrpc\":\"2.0\",\"id\":%s}\n\n", result, m.ID)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "primed", URL: srv.URL, Prefix: "p_"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if u.Version() != "2025-11-25" || len(u.Tools()) != 1 {
		t.Fatalf("negotiated %s, %d tools", u.Version(), len(u.Tools()))
	}
	g := newOCGateway(t, nil, upstream.Options{Name: "primed", URL: srv.URL, Prefix: "g_"})
	ocExpectText(t, g.call(t), "hi", false)
}

// TestSessionLost400: a 2025-era server that answers 400 with a JSON-RPC
// error about the session, not 404, to a session it no longer knows (the
// express wrapper of @modelcontextprotocol/server-everything after a
// restart: -32000 "Bad Request: No valid session ID provided"): the
// gateway makes a new session and sends the call again, as for a 404.
func TestSessionLost400(t *testing.T) {
	t.Parallel()
	var inits, calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
		}
		current := fmt.Sprintf("s%d", inits.Load())
		switch {
		case m.Method == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", inits.Add(1)))
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"forgetful","version":"1"}}`)
		case r.Header.Get("Mcp-Session-Id") != current:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
		case m.Method == "tools/list":
			answer(`{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`)
		case m.Method == "tools/call":
			if calls.Add(1) == 1 {
				inits.Add(1) // the server restarts: s1 is gone
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
				return
			}
			answer(`{"content":[{"type":"text","text":"hi"}]}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	g := newOCGateway(t, nil, upstream.Options{Name: "forgetful", URL: srv.URL, Prefix: "g_"})
	ocExpectText(t, g.call(t), "hi", false)
}
