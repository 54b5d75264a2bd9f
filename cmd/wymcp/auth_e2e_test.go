package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// startAuthServer runs interop/oauth/start.sh: a real authorization server
// (npm oidc-provider), stopped at the test's end.
func startAuthServer(t *testing.T) (mcptest.AuthServer, func()) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "interop", "oauth", "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.StartAuthServer(t, script, "OAUTH_QUIET=1")
}

// clientToken asks the authorization server for a client-credentials
// token for resource (RFC 8707) with scope.
func clientToken(t *testing.T, as mcptest.AuthServer, id, secret, resource, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	req, err := http.NewRequest(http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s (%s): %d %s", id, resource, resp.StatusCode, b)
	}
	return tok.AccessToken
}

// TestAuthEndToEnd runs cmd/wymcp's auth flags against a real
// authorization server (interop/oauth: oidc-provider on Node 22), both
// kinds of token at once: JWT access tokens checked against its JWKS, and
// opaque ones introspected. Skipped unless WYMCP_E2E_OAUTH=1 (CI sets it);
// when set, anything missing fails it.
func TestAuthEndToEnd(t *testing.T) {
	if os.Getenv("WYMCP_E2E_OAUTH") != "1" {
		t.Skip("set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth)")
	}
	began := time.Now()
	as, stopAS := startAuthServer(t)
	t.Logf("%s (node %s) ready at %s in %v", as.Server, as.Node, as.Issuer, time.Since(began).Round(time.Millisecond))
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(as.IntrospectionClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, "-auth-issuer", as.Issuer, "-auth-jwks", as.JWKSURI,
		"-auth-introspect", as.IntrospectionEndpoint, "-auth-client-id", as.IntrospectionClientID, "-auth-client-secret-file", secret,
		"-auth-scope", "add=tools:add")
	timed := func(what string, f func()) {
		t.Helper()
		t0 := time.Now()
		f()
		t.Logf("%-58s %v", what, time.Since(t0).Round(10*time.Microsecond))
	}
	expect := func(token, tool string, status int, challenge string) string {
		t.Helper()
		resp, body := authPost(t, s.url, token, "tools/call", tool)
		if resp.StatusCode != status {
			t.Errorf("%s: status %d, want %d: %s", tool, resp.StatusCode, status, body)
		}
		if got := resp.Header.Get("WWW-Authenticate"); !strings.Contains(got, challenge) {
			t.Errorf("%s: WWW-Authenticate %q, want it to contain %q", tool, got, challenge)
		}
		return body
	}

	var jwt, other, narrow, opaque, opaque2 string
	timed("JWT token for this server (tools:echo tools:add)", func() {
		jwt = clientToken(t, as, as.ClientID, as.ClientSecret, s.url, "tools:echo tools:add")
	})
	other = clientToken(t, as, as.ClientID, as.ClientSecret, "http://127.0.0.1:1/mcp", "tools:echo")
	narrow = clientToken(t, as, as.ClientID, as.ClientSecret, s.url, "tools:echo")
	timed("opaque tokens for this server", func() {
		opaque = clientToken(t, as, as.OpaqueClientID, as.OpaqueClientSecret, s.url, "tools:echo")
		opaque2 = clientToken(t, as, as.OpaqueClientID, as.OpaqueClientSecret, s.url, "tools:echo")
	})
	if strings.Count(jwt, ".") != 2 || strings.Contains(opaque, ".") {
		t.Fatalf("tokens of the wrong kind: jwt %.20q… opaque %.20q…", jwt, opaque)
	}

	timed("JWT → echo: 200 (first use: the signature is checked)", func() {
		if body := expect(jwt, "echo", 200, ""); !strings.Contains(body, `"text":"hi"`) {
			t.Errorf("echo answered %s", body)
		}
	})
	timed("JWT → echo again: 200 (verified-token cache)", func() { expect(jwt, "echo", 200, "") })
	timed("JWT → add (scoped tools:add): 200", func() { expect(jwt, "add", 200, "") })
	timed("JWT without tools:add → add: as an unknown tool", func() {
		if body := expect(narrow, "add", 200, ""); body != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: add"}}` {
			t.Errorf("add without tools:add answered %s", body)
		}
	})
	timed("JWT for another audience → echo: 401", func() {
		expect(other, "echo", 401, `error="invalid_token", error_description="the token was issued for another resource"`)
	})
	timed("opaque → echo: 200 (introspection)", func() { expect(opaque, "echo", 200, "") })
	timed("opaque → echo again: 200 (introspection cache)", func() { expect(opaque, "echo", 200, "") })
	expect("not-a-token-the-server-issued", "echo", 401, `error="invalid_token", error_description="the token is not active"`)

	stopAS()
	timed("authorization server stopped; new opaque token → 503", func() {
		resp, body := authPost(t, s.url, opaque2, "tools/call", "echo")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, `"code":-32603`) {
			t.Errorf("introspection endpoint down: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	})
	timed("authorization server stopped; JWT → echo: 200 (keys cached)", func() { expect(jwt, "echo", 200, "") })
}
