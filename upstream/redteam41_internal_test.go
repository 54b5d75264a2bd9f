package upstream

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// TestChangeStreamRefusedTokenRenewed: an upstream that refuses the
// gateway's token on its listen (401: revoked, or signed with a key it
// has since rotated) makes the credentials drop it, as a call's 401 does,
// so that the stream opened next carries a fresh one. The stream once
// kept sending the refused token, 401 after 401, until a poll's 401 (an
// hour here) dropped it.
func TestChangeStreamRefusedTokenRenewed(t *testing.T) {
	t.Parallel()
	ts := newCredTokenServer(t, numberedTokens(3600))
	creds, err := ClientCredentials(OAuth{TokenURL: ts.URL, ClientID: "id", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := wymcp.New(protocol.Implementation{Name: "refusing", Version: "1"}, &wymcp.Options{ToolsChange: true},
		tools.Must(tools.New("one", "A tool.", func(context.Context, struct{}) (string, error) { return "", nil })))
	if err != nil {
		t.Fatal(err)
	}
	listened := make(chan string, 16)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			auth := r.Header.Get("Authorization")
			listened <- auth
			if auth == "Bearer tok-1" {
				http.Error(w, "revoked", http.StatusUnauthorized)
				return
			}
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	u, err := Connect(t.Context(), Options{Name: "refusing", URL: hs.URL, Prefix: "r_", Refresh: time.Hour, Credentials: creds, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		u.Watch(ctx, func([]*tools.Tool) {})
	}()
	t.Cleanup(func() { cancel(); <-done })
	if got := <-listened; got != "Bearer tok-1" {
		t.Fatalf("first listen with %q", got)
	}
	select {
	case got := <-listened:
		if got != "Bearer tok-2" {
			t.Errorf("the listen after the 401 carried %q, want a fresh token", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no listen after the 401")
	}
}
