package upstream

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// The end-to-end test of ClientCredentials and TokenExchange against a real
// authorization server, interop/oauth/start.sh (npm oidc-provider; its
// README.md says what the server issues). It runs with WYMCP_E2E_OAUTH=1,
// as CI sets it.

// Resource URIs of the gateway (what the caller's token is for) and of the
// upstream (what the gateway's tokens must be for).
const (
	e2eGatewayURL  = "http://127.0.0.1:41001/mcp"
	e2eUpstreamURL = "http://127.0.0.1:41002/mcp"
)

// e2eTokenTTL is the server's token lifetime: a token is due for refresh
// once less than max(10 s, 12 s / 5) = 10 s of it remains, 2 s after it
// was asked for.
const e2eTokenTTL = 12

// countingTransport counts the requests sent to the token endpoint.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

type e2eClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	Jti      string `json:"jti"`
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
	Act      *struct {
		Sub string `json:"sub"`
	} `json:"act"`
}

type e2eJWK struct {
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
}

// e2eVerify checks an RS256 JWT access token against the server's JWKS
// and returns its claims.
func e2eVerify(t *testing.T, token string, keys []e2eJWK) e2eClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	seg := func(i int) []byte {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		return b
	}
	var h struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		Kid string `json:"kid"`
	}
	if err := strictjson.Unmarshal(seg(0), &h); err != nil {
		t.Fatal(err)
	}
	var c e2eClaims
	if err := strictjson.Unmarshal(seg(1), &c); err != nil {
		t.Fatal(err)
	}
	if h.Alg != "RS256" || h.Typ != "at+jwt" {
		t.Fatalf("header %+v", h)
	}
	for _, k := range keys {
		if k.Kid != h.Kid {
			continue
		}
		n, _ := base64.RawURLEncoding.DecodeString(k.N)
		e, _ := base64.RawURLEncoding.DecodeString(k.E)
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], seg(2)); err != nil {
			t.Fatalf("signature: %v", err)
		}
		return c
	}
	t.Fatalf("no key %q in the JWKS", h.Kid)
	return c
}

// e2eToken asks for a client-credentials token over plain HTTP: the
// caller's token, which the gateway will exchange.
func e2eToken(t *testing.T, as mcptest.AuthServer, id, secret, resource, scope string) string {
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
	var tr struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := strictjson.Unmarshal(body, &tr); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %s %s (%v)", resp.Status, tr.Error, err)
	}
	return tr.AccessToken
}

// e2eApply applies creds and returns the bearer token it set.
func e2eApply(t *testing.T, ctx context.Context, creds Credentials) string {
	t.Helper()
	h := http.Header{}
	if err := creds.apply(ctx, h); err != nil {
		t.Fatalf("apply: %v", err)
	}
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		t.Fatalf("Authorization %q", h.Get("Authorization"))
	}
	return tok
}

func TestOAuthE2E(t *testing.T) {
	if os.Getenv("WYMCP_E2E_OAUTH") != "1" {
		t.Skip("set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth/start.sh)")
	}
	script, err := filepath.Abs(filepath.Join("..", "interop", "oauth", "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	as, _ := mcptest.StartAuthServer(t, script, "OAUTH_QUIET=1", "OAUTH_TOKEN_TTL=12")
	if as.TokenTTL != e2eTokenTTL || as.JWTAlg != "RS256" || as.ExchangeClientID == "" || as.ExchangeClientSecret == "" {
		t.Fatalf("server %+v", as)
	}
	var jwks struct {
		Keys []e2eJWK `json:"keys"`
	}
	{
		resp, err := http.Get(as.JWKSURI)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := strictjson.Unmarshal(body, &jwks); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("client credentials", func(t *testing.T) {
		counter := &countingTransport{}
		creds, err := ClientCredentials(OAuth{
			TokenURL:     as.TokenEndpoint,
			ClientID:     as.ClientID,
			ClientSecret: as.ClientSecret,
			Scopes:       []string{"tools:echo", "tools:add"},
			Resource:     e2eUpstreamURL,
			HTTPClient:   &http.Client{Transport: counter, Timeout: 10 * time.Second},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		asked := time.Now()
		first := e2eApply(t, ctx, creds)
		c := e2eVerify(t, first, jwks.Keys)
		if c.Aud != e2eUpstreamURL || c.Scope != "tools:echo tools:add" || c.Sub != as.ClientID ||
			c.ClientID != as.ClientID || c.Iss != as.Issuer || c.Exp-c.Iat != e2eTokenTTL || c.Act != nil {
			t.Fatalf("claims %+v", c)
		}
		for i := 0; i < 10; i++ {
			if tok := e2eApply(t, ctx, creds); tok != first {
				t.Fatalf("apply %d: another token before the refresh is due", i)
			}
		}
		if n := counter.n.Load(); n != 1 {
			t.Fatalf("%d token requests for 11 applies, want 1", n)
		}

		// 2 s after it was asked for, the token is due: the next apply
		// still uses it (valid for 10 s more) and fetches a new one.
		time.Sleep(time.Until(asked.Add(2*time.Second + 200*time.Millisecond)))
		if tok := e2eApply(t, ctx, creds); tok != first {
			t.Fatal("the due token was not used while its refresh ran")
		}
		var second string
		for deadline := time.Now().Add(30 * time.Second); ; {
			if second = e2eApply(t, ctx, creds); second != first {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no new token 30 s after the refresh was due")
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := counter.n.Load(); n != 2 {
			t.Fatalf("%d token requests after one refresh, want 2", n)
		}
		c2 := e2eVerify(t, second, jwks.Keys)
		if c2.Aud != e2eUpstreamURL || c2.Jti == c.Jti || c2.Exp < c.Exp+2 || time.Unix(c.Exp, 0).Before(time.Now()) {
			t.Fatalf("refreshed claims %+v, first %+v", c2, c)
		}
		t.Logf("refreshed %v after the first token, %d s before it expired", time.Since(asked).Round(time.Millisecond), c.Exp-time.Now().Unix())

		// The upstream refused it: the next apply gets a new one.
		creds.refused(ctx, http.Header{"Authorization": {"Bearer " + second}})
		third := e2eApply(t, ctx, creds)
		if third == second || counter.n.Load() != 3 {
			t.Fatalf("after refused: same token %v, %d requests", third == second, counter.n.Load())
		}
		e2eVerify(t, third, jwks.Keys)

		// Wrong secret: the status and the error code, not the secret.
		bad, err := ClientCredentials(OAuth{TokenURL: as.TokenEndpoint, ClientID: as.ClientID, ClientSecret: "not-the-secret", Resource: e2eUpstreamURL})
		if err != nil {
			t.Fatal(err)
		}
		err = bad.apply(ctx, http.Header{})
		if err == nil || err.Error() != "upstream: client credentials: token endpoint: HTTP 401: invalid_client" {
			t.Fatalf("wrong secret: %v", err)
		}
		// A resource the server does not issue tokens for.
		foreign, err := ClientCredentials(OAuth{TokenURL: as.TokenEndpoint, ClientID: as.ClientID, ClientSecret: as.ClientSecret, Resource: "https://elsewhere.example/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		err = foreign.apply(ctx, http.Header{})
		if err == nil || err.Error() != "upstream: client credentials: token endpoint: HTTP 400: invalid_target" {
			t.Fatalf("foreign resource: %v", err)
		}
	})

	t.Run("token exchange", func(t *testing.T) {
		// The caller's token, as the gateway received it: issued to the
		// JWT client for the gateway.
		callerToken := e2eToken(t, as, as.ClientID, as.ClientSecret, e2eGatewayURL, "tools:echo")
		cc := e2eVerify(t, callerToken, jwks.Keys)
		if cc.Aud != e2eGatewayURL || cc.Sub != as.ClientID {
			t.Fatalf("caller token %+v", cc)
		}
		counter := &countingTransport{}
		cfg := OAuth{
			TokenURL:     as.TokenEndpoint,
			ClientID:     as.ExchangeClientID,
			ClientSecret: as.ExchangeClientSecret,
			Scopes:       []string{"tools:echo", "tools:unknown"},
			Resource:     e2eUpstreamURL,
			HTTPClient:   &http.Client{Transport: counter, Timeout: 10 * time.Second},
		}
		creds, err := TokenExchange(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := caller.WithIdentity(context.Background(), &caller.Identity{Subject: "sub:" + cc.Sub, Scopes: []string{"tools:echo"}, Token: callerToken})
		exchanged := e2eApply(t, ctx, creds)
		if exchanged == callerToken {
			t.Fatal("the caller's token was passed through")
		}
		c := e2eVerify(t, exchanged, jwks.Keys)
		if c.Sub != as.ClientID || c.Aud != e2eUpstreamURL || c.Act == nil || c.Act.Sub != as.ExchangeClientID ||
			c.ClientID != as.ExchangeClientID || c.Scope != "tools:echo" || c.Iss != as.Issuer || c.Exp-c.Iat != e2eTokenTTL {
			t.Fatalf("exchanged claims %+v", c)
		}
		if tok := e2eApply(t, ctx, creds); tok != exchanged {
			t.Fatal("a second apply for the same subject got another token")
		}
		if n := counter.n.Load(); n != 1 {
			t.Fatalf("%d token requests for two applies of one subject, want 1", n)
		}

		// Another subject, whose token is opaque (found in the server's
		// store): its own exchange, its own sub.
		opaque := e2eToken(t, as, as.OpaqueClientID, as.OpaqueClientSecret, e2eGatewayURL, "tools:echo")
		octx := caller.WithIdentity(context.Background(), &caller.Identity{Subject: "client:" + as.OpaqueClientID, Token: opaque})
		oc := e2eVerify(t, e2eApply(t, octx, creds), jwks.Keys)
		if oc.Sub != as.OpaqueClientID || oc.Aud != e2eUpstreamURL || oc.Act == nil || oc.Act.Sub != as.ExchangeClientID {
			t.Fatalf("exchanged opaque token's claims %+v", oc)
		}
		if tok := e2eApply(t, ctx, creds); tok != exchanged || counter.n.Load() != 2 {
			t.Fatalf("first subject re-fetched (%d requests)", counter.n.Load())
		}

		// The audience parameter instead of resource.
		byAudience := cfg
		byAudience.Resource, byAudience.Audience, byAudience.HTTPClient = "", "http://127.0.0.1:41003/mcp", nil
		ac, err := TokenExchange(byAudience)
		if err != nil {
			t.Fatal(err)
		}
		if c := e2eVerify(t, e2eApply(t, ctx, ac), jwks.Keys); c.Aud != "http://127.0.0.1:41003/mcp" || c.Sub != as.ClientID {
			t.Fatalf("claims by audience %+v", c)
		}

		// Subject tokens the server did not issue, or no longer honours.
		parts := strings.Split(callerToken, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin","iss":"`+as.Issuer+`","exp":4102444800}`)) + "." + parts[2]
		for name, subject := range map[string]string{
			"forged claims":   forged,
			"not a token":     "not-a-token",
			"bad signature":   parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 256)),
			"unknown opaque":  strings.Repeat("A", 43),
			"truncated token": parts[0] + "." + parts[1] + ".",
		} {
			before := counter.n.Load()
			bctx := caller.WithIdentity(context.Background(), &caller.Identity{Subject: "sub:" + name, Token: subject})
			err := creds.apply(bctx, http.Header{})
			if err == nil || err.Error() != "upstream: token exchange: token endpoint: HTTP 400: invalid_grant" {
				t.Errorf("%s: error %v", name, err)
			} else if strings.Contains(err.Error(), subject) {
				t.Errorf("%s: the error holds the subject token", name)
			}
			if counter.n.Load() != before+1 {
				t.Errorf("%s: %d requests", name, counter.n.Load()-before)
			}
		}

		// No caller's token: an error, and no request.
		before := counter.n.Load()
		if err := creds.apply(context.Background(), http.Header{}); err != errNoCaller {
			t.Errorf("no caller: %v", err)
		}
		if counter.n.Load() != before {
			t.Error("a token request without a caller")
		}

		// The JWT client may not exchange: the grant is the exchange
		// client's only.
		other := cfg
		other.ClientID, other.ClientSecret, other.HTTPClient = as.ClientID, as.ClientSecret, nil
		oc2, err := TokenExchange(other)
		if err != nil {
			t.Fatal(err)
		}
		if err := oc2.apply(ctx, http.Header{}); err == nil || err.Error() != "upstream: token exchange: token endpoint: HTTP 400: invalid_request" {
			t.Errorf("exchange by the JWT client: %v", err)
		}
	})
}
