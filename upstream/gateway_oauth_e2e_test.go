package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestGatewayTokenExchange: a gateway and its upstream, both OAuth
// resource servers of the real authorization server (interop/oauth). The
// client's token is for the gateway; the gateway exchanges it (RFC 8693)
// for one of the upstream's audience, which names the same user and the
// gateway as the actor, and lists the upstream's tools with its own
// client-credentials token. The client's token never reaches the upstream.
func TestGatewayTokenExchange(t *testing.T) {
	if os.Getenv("WYMCP_E2E_OAUTH") != "1" {
		t.Skip("set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth/start.sh)")
	}
	script, err := filepath.Abs("../interop/oauth/start.sh")
	if err != nil {
		t.Fatal(err)
	}
	as, _ := mcptest.StartAuthServer(t, script, "OAUTH_QUIET=1")
	keys, err := auth.NewRemoteJWKS(as.JWKSURI, nil)
	if err != nil {
		t.Fatal(err)
	}

	// A resource server's URL is its audience, so each is listening
	// before it is built.
	resourceServer := func() (string, *atomic.Value) {
		var h atomic.Value
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.Load().(http.Handler).ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		return hs.URL, &h
	}
	upstreamURL, upstreamHandler := resourceServer()
	gatewayURL, gatewayHandler := resourceServer()
	resourceAuth := func(audience string) *wymcp.AuthOptions {
		v, err := auth.NewJWT(as.Issuer, audience, keys, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &wymcp.AuthOptions{Authenticator: v, ResourceMetadata: audience + "/.well-known/oauth-protected-resource"}
	}

	var presented atomic.Value // the Authorization the upstream saw last
	whoami := tools.Must(tools.New("whoami", "Says who called, and through whom.", func(ctx context.Context, _ struct{}) (string, error) {
		p := wymcp.PrincipalFrom(ctx)
		act, _ := p.Claims["act"].(map[string]any)
		return fmt.Sprintf("%s via %v", p.Subject, act["sub"]), nil
	}))
	origin, err := wymcp.New(upstreamInfo, &wymcp.Options{Auth: resourceAuth(upstreamURL)}, whoami)
	if err != nil {
		t.Fatal(err)
	}
	upstreamHandler.Store(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented.Store(r.Header.Get("Authorization"))
		origin.ServeHTTP(w, r)
	}))

	creds, err := upstream.TokenExchange(upstream.OAuth{
		TokenURL: as.TokenEndpoint, ClientID: as.ExchangeClientID, ClientSecret: as.ExchangeClientSecret,
		Resource: upstreamURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, upstream.Options{Name: "origin", URL: upstreamURL, Prefix: "o_", Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	gw, err := wymcp.New(gatewayInfo, &wymcp.Options{Auth: resourceAuth(gatewayURL)}, u.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	gatewayHandler.Store(http.Handler(gw))

	// The caller's token, for the gateway.
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {gatewayURL}}
	req, _ := http.NewRequest(http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(as.ClientID, as.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("caller token: %v", err)
	}

	ep := &mcptest.Endpoint{URL: gatewayURL, HTTP: http.DefaultClient, Info: gatewayInfo}
	rep := ep.Send(t, mcptest.ToolCall("o_whoami", `{}`).With("Authorization", "Bearer "+tok.AccessToken))
	res := rep.ExpectResult(t, "1")
	if text, _ := mcptest.ToolText(t, res); text != fmt.Sprintf("%q", as.ClientID+" via "+as.ExchangeClientID) {
		t.Errorf("whoami through the gateway: %s", text)
	}
	if got, _ := presented.Load().(string); got == "" || got == "Bearer "+tok.AccessToken {
		t.Errorf("the upstream saw %q: not an exchanged token", got)
	}
	// Without a token the gateway refuses the client itself.
	rep = ep.Send(t, mcptest.ToolCall("o_whoami", `{}`))
	if rep.Status != http.StatusUnauthorized {
		t.Errorf("no token: status %d", rep.Status)
	}
}
