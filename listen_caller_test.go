package wymcp_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
)

// TestListenEndsAtTokenExpiry: a listen stream outlives no credential: at
// the caller's token's expiry it ends with its graceful result (a change
// not yet told first), and the client listens again with a fresh token.
// A token without an expiry keeps its stream.
func TestListenEndsAtTokenExpiry(t *testing.T) {
	t.Parallel()
	// brief's expiry is set just before its stream opens, 3 s ahead: a
	// listen with a token already expired is refused
	// (TestListenWithExpiredTokenRefused), and a loaded machine may take a
	// while to open it.
	var expiry atomic.Int64
	auth := func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer brief":
			return &wymcp.Principal{Subject: "brief", Scopes: []string{"mcp"}, Expiry: time.Unix(0, expiry.Load())}, nil
		case "Bearer lasting":
			return &wymcp.Principal{Subject: "lasting", Scopes: []string{"mcp"}}, nil
		}
		return nil, &wymcp.AuthError{Code: wymcp.AuthNoToken}
	}
	srv, err := wymcp.New(listenInfo, &wymcp.Options{
		ToolsChange: true,
		Auth:        &wymcp.AuthOptions{Authenticator: wymcp.AuthenticatorFunc(auth), ResourceMetadata: testMetadata},
	}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	lasting := openListen(t, ep, bearer(listen("1", `{"toolsListChanged":true}`), "lasting"), "1", `{"toolsListChanged":true}`)
	expiry.Store(time.Now().Add(3 * time.Second).UnixNano())
	brief := openListen(t, ep, bearer(listen("2", `{"toolsListChanged":true}`), "brief"), "2", `{"toolsListChanged":true}`)
	expectEnd(t, brief, "2")
	if time.Now().Before(time.Unix(0, expiry.Load())) {
		t.Errorf("the stream ended before its token expired")
	}
	// The lasting stream is still open: it is told of the next change.
	if err := srv.SetTools(generation(t, 2)...); err != nil {
		t.Fatal(err)
	}
	if got := lasting.NextData(t); got != changedOf("1") {
		t.Fatalf("the stream without an expiry: %s, want %s", got, changedOf("1"))
	}
}

// TestListenScopedChangeToldToAll: a change of a tool a listener cannot
// see (a scope it lacks) is told to it too, by the same frame as to any:
// list_changed names no tool, so it leaks only that the list may have
// changed, and no per-caller list is built to decide (docs/design.md §5a,
// §10e).
func TestListenScopedChangeToldToAll(t *testing.T) {
	t.Parallel()
	srv, err := wymcp.New(listenInfo, &wymcp.Options{
		ToolsChange: true,
		Auth:        &wymcp.AuthOptions{Authenticator: wymcp.AuthenticatorFunc(fakeAuthenticator), ResourceMetadata: testMetadata, RequiredScopes: []string{"mcp"}},
	}, generation(t, 1)...)
	if err != nil {
		t.Fatal(err)
	}
	ep := mcptest.Serve(t, srv, listenInfo)
	reader := openListen(t, ep, bearer(listen("1", `{"toolsListChanged":true}`), "reader"), "1", `{"toolsListChanged":true}`)
	admin := tools.Must(tools.New("admin_only", "Needs admin.", func(context.Context, struct{}) (string, error) { return "", nil }, tools.WithScopes("admin")))
	if err := srv.SetTools(append(generation(t, 1), admin)...); err != nil {
		t.Fatal(err)
	}
	if got := reader.NextData(t); got != changedOf("1") {
		t.Fatalf("the reader's stream: %s, want %s", got, changedOf("1"))
	}
}
