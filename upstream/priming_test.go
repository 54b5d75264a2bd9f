package upstream_test

import (
	"context"
	"net/http"
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
	f := (&legacyUp{primed: true}).start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "primed", URL: f.URL, Prefix: "p_"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if u.Version() != "2025-11-25" || len(u.Tools()) != 1 {
		t.Fatalf("negotiated %s, %d tools", u.Version(), len(u.Tools()))
	}
	g := newOCGateway(t, nil, upstream.Options{Name: "primed", URL: f.URL, Prefix: "g_"})
	ocExpectText(t, g.call(t), "hi", false)
}

// TestSessionLost400: a 2025-era server that answers 400 with a JSON-RPC
// error about the session, not 404, to a session it no longer knows (the
// express wrapper of @modelcontextprotocol/server-everything after a
// restart: -32000 "Bad Request: No valid session ID provided"): the
// gateway makes a new session and sends the call again, as for a 404.
func TestSessionLost400(t *testing.T) {
	t.Parallel()
	f := &legacyUp{lost: ocStatus(http.StatusBadRequest, "application/json",
		`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)}
	var calls atomic.Int32
	f.call = func(w http.ResponseWriter, r *http.Request, id string, body []byte) {
		if calls.Add(1) == 1 {
			f.forget() // the server restarts: s1 is gone
			f.lost(w, r, id, body)
			return
		}
		ocResult(`{"content":[{"type":"text","text":"hi"}]}`)(w, r, id, body)
	}
	f.start(t)
	g := newOCGateway(t, nil, upstream.Options{Name: "forgetful", URL: f.URL, Prefix: "g_"})
	ocExpectText(t, g.call(t), "hi", false)
	if n := f.sessions(); n != 2 {
		t.Errorf("%d sessions, want 2 (a new one after the loss)", n)
	}
}
