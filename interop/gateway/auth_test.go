package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// token gets a client-credentials access token of the authorization
// server's JWT client for resource.
func token(t *testing.T, as mcptest.AuthServer, resource, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	req, err := http.NewRequest(http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(as.ClientID, as.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s: HTTP %d, no access_token (%v)", resource, resp.StatusCode, err)
	}
	return tok.AccessToken
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestGatewayAuth: the gateway is an OAuth resource server of a real
// authorization server (interop/oauth's oidc-provider) and checks the
// client's token; the go-sdk upstream is one too, of its own audience,
// and checks its own token with go-sdk's auth middleware. The gateway's
// credentials for it are tokenExchange (RFC 8693): the upstream sees a
// token that names the caller (sub) and the gateway's exchange client as
// the actor (act.sub), never the client's own token, which it would
// refuse. The mcp-go upstream, without credentials, sees no token at all.
func TestGatewayAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, err := filepath.Abs("../oauth/start.sh")
	if err != nil {
		t.Fatal(err)
	}
	as, _ := mcptest.StartAuthServer(t, script, "OAUTH_QUIET=1")
	_, sdk := startGo(t, "sdkserver", "127.0.0.1:0", "-auth-issuer", as.Issuer, "-auth-jwks", as.JWKSURI)
	_, mgo := startGo(t, "mgoserver", "127.0.0.1:0")

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "exchange.secret"), []byte(as.ExchangeClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, gw := startGateway(t, dir, fmt.Sprintf(`upstreams:
  - name: sdk
    url: %s
    prefix: sdk_
    credentials:
      tokenExchange:
        tokenURL: %s
        clientID: %s
        clientSecretFile: exchange.secret
        resource: %s
        scopes: [tools:echo]
  - name: mgo
    url: %s
    prefix: mgo_
`, sdk, as.TokenEndpoint, as.ExchangeClientID, sdk, mgo), "-auth-issuer", as.Issuer, "-auth-jwks", as.JWKSURI)

	// The client's token, for the gateway (its URL is its audience).
	clientToken := token(t, as, gw, "tools:echo")

	t.Run("checked at the gateway", func(t *testing.T) {
		for _, c := range []struct{ name, bearer string }{
			{"no token", ""},
			{"a token for another audience", token(t, as, sdk, "tools:echo")},
			{"not a token", "not-a-token"},
		} {
			a, err := post(ctx, http.DefaultClient, gw, mcptest.ToolCall("sdk_echo", `{"text":"x"}`), 1, c.bearer)
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != http.StatusUnauthorized || !strings.Contains(a.Header.Get("WWW-Authenticate"), `resource_metadata="`) {
				t.Errorf("%s: HTTP %d, WWW-Authenticate %q: want 401 with resource_metadata", c.name, a.Status, a.Header.Get("WWW-Authenticate"))
			}
		}
	})

	t.Run("the upstream checks its own", func(t *testing.T) {
		// The upstream really refuses: the client's token (the gateway's
		// audience) and no token at all. Passing the client's token
		// through would fail.
		for _, bearer := range []string{"", clientToken} {
			a, err := post(ctx, http.DefaultClient, sdk, mcptest.ToolCall("echo", `{"text":"x"}`), 1, bearer)
			if err != nil {
				t.Fatal(err)
			}
			if a.Status != http.StatusUnauthorized {
				t.Errorf("the go-sdk upstream called directly with %q: HTTP %d %s, want 401", bearer, a.Status, a.Raw)
			}
		}
	})

	t.Run("exchanged at the upstream", func(t *testing.T) {
		if text, isError := callText(t, ctx, gw, "sdk_echo", `{"text":"through the gateway"}`, clientToken); text != "through the gateway" || isError {
			t.Errorf("sdk_echo: %q (isError %v)", text, isError)
		}
		text, isError := callText(t, ctx, gw, "sdk_whoami", `{}`, clientToken)
		if isError {
			t.Fatalf("sdk_whoami: %s", text)
		}
		var who struct {
			Sub         string               `json:"sub"`
			Aud         any                  `json:"aud"`
			ClientID    string               `json:"client_id"`
			Act         struct{ Sub string } `json:"act"`
			Scope       string               `json:"scope"`
			TokenSHA256 string               `json:"tokenSHA256"`
		}
		if err := json.Unmarshal([]byte(text), &who); err != nil {
			t.Fatalf("sdk_whoami: %q: %v", text, err)
		}
		t.Logf("the upstream's token: %s", text)
		if who.Sub != as.ClientID || who.Act.Sub != as.ExchangeClientID || who.Aud != sdk || who.ClientID != as.ExchangeClientID {
			t.Errorf("the upstream saw sub %q act.sub %q aud %v client_id %q; want sub %q (the caller) act.sub %q aud %q",
				who.Sub, who.Act.Sub, who.Aud, who.ClientID, as.ClientID, as.ExchangeClientID, sdk)
		}
		if who.TokenSHA256 == "" || who.TokenSHA256 == sha(clientToken) {
			t.Errorf("the upstream was presented the client's own token")
		}
		// Of every token the upstream was ever presented (the gateway's
		// own client-credentials token for tools/list, the exchanged
		// one), none is the client's.
		text, _ = callText(t, ctx, gw, "sdk_seen", `{}`, clientToken)
		var seen []string
		if err := json.Unmarshal([]byte(text), &seen); err != nil {
			t.Fatalf("sdk_seen: %q: %v", text, err)
		}
		if slices.Contains(seen, sha(clientToken)) || len(seen) < 2 {
			t.Errorf("tokens the upstream saw: %q (the client's: %s)", seen, sha(clientToken))
		}
		// An upstream without credentials gets no token at all.
		if text, _ := callText(t, ctx, gw, "mgo_authz", `{}`, clientToken); text != "" {
			t.Errorf("the mcp-go upstream was sent Authorization %q", text)
		}
	})
}
