package main

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// hiddenGateway runs the demo set (add needs tools:add) and an upstream
// whose vault needs tools:vault (toolScopes), behind JWT auth with the
// required scope mcp, serving both eras; extra are more flags. It returns
// the server and a token maker.
func hiddenGateway(t *testing.T, extra ...string) (*server, func(scope string) string) {
	t.Helper()
	signer := newES256(t, "k1")
	keys := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(keys, signer.jwks(), 0o600); err != nil {
		t.Fatal(err)
	}
	_, origin := serveOrigin(t, nil, says("greet", "hi"), says("vault", "opened"))
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+origin+"\n    toolScopes:\n      vault: [\"tools:vault\"]\n")
	const iss = "https://as.example.test"
	s := start(t, append([]string{"-auth-issuer", iss, "-auth-jwks", keys, "-auth-scope", "add=tools:add",
		"-auth-required-scope", "mcp", "-upstreams", file, "-versions", allRevisions}, extra...)...)
	return s, func(scope string) string {
		return signer.sign(t, map[string]any{"iss": iss, "aud": s.url, "sub": "ada", "scope": scope, "exp": time.Now().Add(time.Hour).Unix()})
	}
}

// seen is what a client observes of an answer: status, every header but
// Date, body.
type seen struct {
	status int
	header http.Header
	body   string
}

func observe(rep mcptest.Reply) seen {
	h := rep.Header.Clone()
	h.Del("Date")
	return seen{rep.Status, h, string(rep.Raw)}
}

// eraCall is a tools/call of name with a bearer token in one era.
func eraCall(era, name, token string) mcptest.RPC {
	if era == "2026-07-28" {
		return mcptest.ToolCall(name, `{}`).With("Authorization", "Bearer "+token)
	}
	return mcptest.RPC{
		Body:    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`,
		Headers: map[string]string{"MCP-Protocol-Version": era, "Authorization": "Bearer " + token},
	}
}

// TestAuthHiddenTools: through the binary, a caller without a tool's
// scopes, a demo tool's (-auth-scope) or an upstream tool's (toolScopes),
// gets for its call exactly what a name no tool has gets (the name
// swapped, which is as long), in both eras; tools/list leaves both out.
func TestAuthHiddenTools(t *testing.T) {
	t.Parallel()
	s, token := hiddenGateway(t)
	narrow := token("mcp")
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, names := range [][2]string{{"add", "adz"}, {"vault", "vaulz"}} {
			hidden, unknown := names[0], names[1]
			u := observe(s.ep.Send(t, eraCall(era, unknown, narrow)))
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: ` + unknown + `"}}`
			if u.status != 200 || u.body != want || u.header.Get("WWW-Authenticate") != "" {
				t.Errorf("%s %s: %d %v %s, want 200 %s", era, unknown, u.status, u.header, u.body, want)
			}
			h := observe(s.ep.Send(t, eraCall(era, hidden, narrow)))
			u.body = strings.ReplaceAll(u.body, unknown, hidden)
			if !reflect.DeepEqual(h, u) {
				t.Errorf("%s: the hidden %s: %+v\nthe unknown %s: %+v", era, hidden, h, unknown, u)
			}
			// With the scope, the tool answers.
			if rep := s.ep.Send(t, eraCall(era, hidden, token("mcp tools:add tools:vault"))); rep.Status != 200 || rep.Msg.Error != nil {
				t.Errorf("%s %s with its scope: %d %s", era, hidden, rep.Status, rep.Raw)
			}
		}
	}
	_, body := authPost(t, s.url, narrow, "tools/list", "")
	if strings.Contains(body, `"name":"add"`) || strings.Contains(body, `"name":"vault"`) || !strings.Contains(body, `"name":"greet"`) {
		t.Errorf("tools/list without the tools' scopes: %s", body)
	}
}

// TestAuthScopeChallenge: with -auth-scope-challenge the same calls are
// answered 403 insufficient_scope naming every scope they need (step-up),
// the upstream tool's included.
func TestAuthScopeChallenge(t *testing.T) {
	t.Parallel()
	s, token := hiddenGateway(t, "-auth-scope-challenge")
	metadata := strings.TrimSuffix(s.url, "/mcp") + "/.well-known/oauth-protected-resource/mcp"
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, c := range [][2]string{{"add", "tools:add"}, {"vault", "tools:vault"}} {
			rep := s.ep.Send(t, eraCall(era, c[0], token("mcp")))
			rep.ExpectError(t, 403, -32600, "1")
			if got, want := rep.Header.Values("WWW-Authenticate"), `Bearer error="insufficient_scope", resource_metadata="`+metadata+`", scope="mcp `+c[1]+`"`; len(got) != 1 || got[0] != want {
				t.Errorf("%s %s: WWW-Authenticate %q, want %q", era, c[0], got, want)
			}
		}
		s.ep.Send(t, eraCall(era, "vaulz", token("mcp"))).ExpectError(t, 200, -32602, "1")
	}
}
