package policy_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/policy"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// A server whose ops_restart only the on-call group may see and call. The
// authenticator stands in for auth.NewJWT: the principal's Claims are the
// token's, its groups claim among them.
func Example() {
	onCall, err := policy.Compile(`"oncall" in caller.claims.groups`)
	if err != nil {
		panic(err)
	}
	restart := tools.Must(tools.New("ops_restart", "Restarts the service.",
		func(context.Context, struct{}) (string, error) { return "restarted", nil },
		tools.WithAllow(onCall)))
	status := tools.Must(tools.New("ops_status", "Says how the service is.",
		func(context.Context, struct{}) (string, error) { return "up", nil }))

	groups := map[string][]any{"alice": {"oncall"}, "bob": {"dev"}}
	authn := wymcp.AuthenticatorFunc(func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
		user := r.Header.Get("Authorization")[len("Bearer "):] // a test token: the user's name
		return &wymcp.Principal{Subject: user, Claims: map[string]any{"sub": user, "groups": groups[user]}}, nil
	})
	srv, err := wymcp.New(protocol.Implementation{Name: "example", Version: "1.0.0"},
		&wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: authn}}, restart, status)
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(context.Background())

	for _, user := range []string{"alice", "bob"} {
		list, _ := mcptest.Result(hs.URL, mcptest.Call("tools/list", "").With("Authorization", "Bearer "+user))
		call, _ := mcptest.Result(hs.URL, mcptest.ToolCall("ops_restart", `{}`).With("Authorization", "Bearer "+user))
		fmt.Println(user, "lists", strings.Contains(list, `"ops_restart"`), "and calls:", call)
	}
	// Output:
	// alice lists true and calls: {"content":[{"type":"text","text":"\"restarted\""}]}
	// bob lists false and calls: 200 {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ops_restart"}}
}
