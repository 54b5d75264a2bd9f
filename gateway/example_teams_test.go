package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/policy"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// A gateway for two teams, what cmd/wymcp builds from
// deploy/teams.example.yaml: each view its own protected resource (its
// Authenticator accepts only tokens for its audience), a rule in CEL over
// the token's claims on one view, and a per-caller rate limit on an
// upstream. The authenticator stands in for auth.NewJWT(issuer,
// audience, keys, nil): a test token is "user@audience". With real tokens,
// also mount each view's auth.NewMetadataHandler at its first route (the
// path-inserted /.well-known/oauth-protected-resource/mcp/dev) and name
// its URL in the view's AuthOptions.ResourceMetadata, as cmd/wymcp does.
// A stdio upstream is the same upstream.Options with Command and Args
// (upstream.Options{Name: "files", Command: "npx", Args: ...}) in place of
// URL.
func Example_teams() {
	tickets, stop := mcptest.ServeExample(says("open", "#42 opened"), says("close", "#42 closed"))
	defer stop()

	groups := map[string][]any{"alice": {"support"}, "bob": {"dev"}}
	tokenFor := func(audience string) wymcp.AuthenticatorFunc {
		return func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
			user, aud, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "@")
			if aud != audience {
				return nil, &wymcp.AuthError{Code: wymcp.AuthInvalidToken, Description: "the token was issued for another resource"}
			}
			return &wymcp.Principal{Subject: user, Claims: map[string]any{"sub": user, "groups": groups[user]}}, nil
		}
	}
	support, err := policy.Compile(`"support" in caller.claims.?groups.orValue([])`)
	if err != nil {
		panic(err)
	}

	g, err := gateway.New(context.Background(), gateway.Options{
		Info: protocol.Implementation{Name: "gateway", Version: "1.0.0"},
		Upstreams: []upstream.Options{{
			Name: "tickets", URL: tickets, Prefix: "tickets_",
			RateLimit: access.Limit{Calls: 1, Per: time.Hour}, // each caller, all its tools together
		}},
		Views: []gateway.View{
			{Path: "/mcp/dev", Name: "dev-tools",
				Auth: &wymcp.AuthOptions{Authenticator: tokenFor("dev")}},
			{Path: "/mcp/support", Name: "support-tools", Tools: []string{"tickets_open"},
				Auth:  &wymcp.AuthOptions{Authenticator: tokenFor("support")},
				Allow: support},
		},
	})
	if err != nil {
		panic(err)
	}
	defer g.Shutdown(context.Background())
	hs := httptest.NewServer(g)
	defer hs.Close()

	// What each caller is shown and answered: a tools/list's names, a
	// call's text, or the HTTP status of an answer that is not a result.
	ask := func(view, token string, r mcptest.RPC) string {
		res, _ := mcptest.Result(hs.URL+view, r.With("Authorization", "Bearer "+token))
		var out struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal([]byte(res), &out) != nil {
			status, _, _ := strings.Cut(res, " ")
			return status
		}
		if len(out.Content) > 0 {
			return out.Content[0].Text
		}
		var names []string
		for _, t := range out.Tools {
			names = append(names, t.Name)
		}
		return fmt.Sprint(names)
	}
	list, open := mcptest.Call("tools/list", ""), mcptest.ToolCall("tickets_open", `{}`)
	fmt.Println("bob on /mcp/dev:", ask("/mcp/dev", "bob@dev", list))
	fmt.Println("alice on /mcp/support:", ask("/mcp/support", "alice@support", list))
	fmt.Println("bob on /mcp/support:", ask("/mcp/support", "bob@support", list))
	fmt.Println("a /mcp/dev token on /mcp/support:", ask("/mcp/support", "bob@dev", list))
	fmt.Println("alice calls:", ask("/mcp/support", "alice@support", open))
	fmt.Println("alice calls again:", ask("/mcp/support", "alice@support", open))
	// Output:
	// bob on /mcp/dev: [tickets_open tickets_close]
	// alice on /mcp/support: [tickets_open]
	// bob on /mcp/support: []
	// a /mcp/dev token on /mcp/support: 401
	// alice calls: "#42 opened"
	// alice calls again: 429
}
