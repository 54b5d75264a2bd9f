package wymcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// Issue 41's red team: listen streams and the credentials they outlive
// no longer than.

// TestListenWithExpiredTokenRefused: a token past its exp that the
// authenticator still accepts (auth.JWT's leeway for clock skew, 30 s)
// opens no listen stream: it is refused 401 invalid_token, so that the
// client gets a fresh token. It was acknowledged and ended at once (the
// stream ends at the token's expiry), and a client that listens again
// with the token it has looped, a stream a round trip, for the whole
// leeway. Calls with that token are served as before; a token whose exp
// is ahead opens its stream.
func TestListenWithExpiredTokenRefused(t *testing.T) {
	t.Parallel()
	s := newJWTSigner(t)
	keys, err := auth.ParseJWKS(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWT(jwtIssuer, jwtAudience, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wymcp.New(listenInfo, &wymcp.Options{
		Logger:      slog.New(slog.DiscardHandler),
		ToolsChange: true,
		Auth:        &wymcp.AuthOptions{Authenticator: v, ResourceMetadata: testMetadata},
	}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ep := mcptest.Serve(t, srv, listenInfo)

	late := s.token(t, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-10 * time.Second).Unix()})
	rep := ep.Send(t, bearer(listen("1", `{"toolsListChanged":true}`), late))
	rep.ExpectError(t, http.StatusUnauthorized, -32600, "1")
	want := `Bearer error="invalid_token", error_description="the token has expired", resource_metadata="` + testMetadata + `"`
	if got := rep.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}
	// The same token's calls are served: the leeway is the authenticator's.
	ep.Send(t, bearer(mcptest.Call("tools/list", ""), late)).ExpectResult(t, "1")

	fresh := s.token(t, jwt.MapClaims{"sub": "alice"})
	openListen(t, ep, bearer(listen("2", `{"toolsListChanged":true}`), fresh), "2", `{"toolsListChanged":true}`)
}

// TestUnknownToolWaitersBounded: the calls waiting on Options.UnknownTool
// hold no in-flight place, so they are bounded on their own (half of
// MaxInFlight, as the calls awaiting a 2025-era client's answer): past
// it, a call of an unknown name is answered as unknown at once, without
// asking, byte for byte as any. They were unbounded: a flood of unknown
// names while the hook waited (an upstream's slow tools/list) held a
// goroutine and a request each, whatever MaxInFlight said.
func TestUnknownToolWaitersBounded(t *testing.T) {
	t.Parallel()
	entered := make(chan string, 8)
	release := make(chan struct{})
	hook := func(ctx context.Context, name string) bool {
		entered <- name
		select {
		case <-release:
		case <-ctx.Done():
		}
		return false
	}
	srv, err := wymcp.New(listenInfo, &wymcp.Options{UnknownTool: hook, MaxInFlight: 4}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	// Before the server's cleanup: a hook held would hold it.
	t.Cleanup(let)
	// A known tool's call never asks.
	ep.Send(t, mcptest.ToolCall("version", `{}`)).ExpectResult(t, "1")

	waiting := make(chan mcptest.Reply, 2)
	for i := range 2 {
		go func() { waiting <- ep.Send(t, mcptest.ToolCall("waits_"+string(rune('a'+i)), `{}`)) }()
	}
	<-entered
	<-entered
	third := make(chan mcptest.Reply, 1)
	go func() { third <- ep.Send(t, mcptest.ToolCall("waits_c", `{}`)) }()
	select {
	case name := <-entered:
		t.Fatalf("%s asked the hook past the bound", name)
	case rep := <-third:
		rep.ExpectError(t, 200, -32602, "1")
		if !strings.Contains(string(rep.Raw), `"Unknown tool: waits_c"`) {
			t.Errorf("past the bound: %s", rep.Raw)
		}
	}
	let()
	for range 2 {
		(<-waiting).ExpectError(t, 200, -32602, "1")
	}
	// The bound is of those waiting: freed, a name is asked about again.
	go func() { <-entered }()
	ep.Send(t, mcptest.ToolCall("waits_d", `{}`)).ExpectError(t, 200, -32602, "1")
}
