package upstream_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// TestExchangeTwoClientsOfOneUser (issue 38): alice calls through a
// high-privilege client, then through a low-privilege one. The upstream
// sees, each time, the token exchanged from the token of the client she
// called through, never the other's; and a requestState minted through
// one client is refused through the other (-32602, docs/design.md §5),
// while it still opens through the client it was minted for.
func TestExchangeTwoClientsOfOneUser(t *testing.T) {
	var exchanges atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		tok := "gw"
		if subject := r.PostForm.Get("subject_token"); subject != "" {
			tok = fmt.Sprintf("x-%s-%d", subject, exchanges.Add(1))
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, tok)
	}))
	t.Cleanup(tokens.Close)

	// The upstream: the origin's tools, recording what each call presented.
	var mu sync.Mutex
	var presented []string
	origin, err := wymcp.New(upstreamInfo, nil, originTools(t)...)
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			mu.Lock()
			presented = append(presented, r.Header.Get("Authorization"))
			mu.Unlock()
		}
		origin.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(presented) == 0 {
			return ""
		}
		return presented[len(presented)-1]
	}

	creds, err := upstream.TokenExchange(upstream.OAuth{TokenURL: tokens.URL, ClientID: "gw", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	authn := wymcp.AuthenticatorFunc(func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer alice-admin":
			return &wymcp.Principal{Subject: "alice", ClientID: "admin-console", Scopes: []string{"admin", "files:write"}}, nil
		case "Bearer alice-read":
			return &wymcp.Principal{Subject: "alice", ClientID: "reader", Scopes: []string{"read"}}, nil
		case "Bearer alice-admin-2":
			return &wymcp.Principal{Subject: "alice", ClientID: "admin-console", Scopes: []string{"admin", "files:write"}}, nil
		}
		return nil, &wymcp.AuthError{Code: wymcp.AuthNoToken}
	})
	gw := startGateway(t, &wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: authn}},
		upstream.Options{Name: "origin", URL: up.URL, Prefix: "o_", Credentials: creds})
	as := func(rpc mcptest.RPC, token string) mcptest.RPC { return rpc.With("Authorization", "Bearer "+token) }

	gw.Send(t, as(mcptest.ToolCall("o_echo", `{"text":"hi"}`), "alice-admin")).ExpectResult(t, "1")
	if got := last(); got != "Bearer x-alice-admin-1" {
		t.Fatalf("through admin-console the upstream saw %q", got)
	}
	gw.Send(t, as(mcptest.ToolCall("o_echo", `{"text":"hi"}`), "alice-read")).ExpectResult(t, "1")
	if got := last(); got != "Bearer x-alice-read-2" {
		t.Fatalf("through reader the upstream saw %q, want the exchange of reader's own token", got)
	}
	gw.Send(t, as(mcptest.ToolCall("o_echo", `{"text":"hi"}`), "alice-admin")).ExpectResult(t, "1")
	if got := last(); got != "Bearer x-alice-admin-1" {
		t.Fatalf("through admin-console again the upstream saw %q, want its cached exchange", got)
	}

	// The gateway's requestState follows the same identity.
	caps := `{"elicitation":{}}`
	_, state := gw.Send(t, as(mcptest.ToolCall("o_ask", `{}`).WithCapabilities(caps), "alice-admin")).ExpectInputRequired(t, "1")
	answer := `{"name":{"action":"accept","content":{"name":"Ada"}}}`
	rep := gw.Send(t, as(mcptest.ToolCall("o_ask", `{}`).WithCapabilities(caps).Retry(answer, state), "alice-read"))
	rep.ExpectError(t, 200, -32602, "1")
	if msg := rep.Msg.Error.Message; msg != "Invalid params: requestState is invalid or has expired" {
		t.Errorf("message %q", msg)
	}
	// Another token of the client it was minted through opens it.
	res := gw.Send(t, as(mcptest.ToolCall("o_ask", `{}`).WithCapabilities(caps).Retry(answer, state), "alice-admin-2")).ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); text != `"hello Ada"` {
		t.Errorf("retry through admin-console: %q", text)
	}
}
