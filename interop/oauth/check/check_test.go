// Package check proves that interop/oauth/start.sh brings up a working
// authorization server: client-credentials tokens for two audiences, their
// claims, the JWKS that verifies them, RFC 7662 introspection of opaque
// tokens, revocation and expiry. It is the harness the library's own
// end-to-end auth test builds on, and it needs nothing but the standard
// library and the script.
//
//	WYMCP_E2E_OAUTH=1 go test -v ./...   (from interop/oauth/check)
package check

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// startServer runs start.sh with the extra environment and returns its
// JSON line with a function that stops the server (also a cleanup).
func startServer(t *testing.T, env ...string) (mcptest.AuthServer, func()) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	info, stop := mcptest.StartAuthServer(t, script, env...)
	t.Logf("%s (node %s) ready at %s in %v", info.Server, info.Node, info.Issuer, time.Since(began).Round(time.Millisecond))
	return info, stop
}

var client = &http.Client{Timeout: 10 * time.Second}

// postForm sends a form with HTTP Basic credentials and decodes the JSON
// answer into out; it returns the status code.
func postForm(t *testing.T, endpoint, user, pass string, form url.Values, out any) int {
	t.Helper()
	status, err := tryPostForm(endpoint, user, pass, form, out)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	return status
}

func tryPostForm(endpoint, user, pass string, form url.Values, out any) (int, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if user != "" {
		// RFC 6749 §2.3.1: both halves are form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, errors.New("decoding " + string(body) + ": " + err.Error())
		}
	}
	return resp.StatusCode, nil
}

func getJSON(t *testing.T, u string, out any) {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	Scope            string `json:"scope"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// clientCredentials asks for a token for one resource (RFC 8707) and scopes.
func clientCredentials(t *testing.T, info mcptest.AuthServer, id, secret, resource, scope string) (int, tokenResponse) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if resource != "" {
		form.Set("resource", resource)
	}
	if scope != "" {
		form.Set("scope", scope)
	}
	var tr tokenResponse
	status := postForm(t, info.TokenEndpoint, id, secret, form, &tr)
	return status, tr
}

func mustToken(t *testing.T, info mcptest.AuthServer, id, secret, resource, scope string) tokenResponse {
	t.Helper()
	status, tr := clientCredentials(t, info, id, secret, resource, scope)
	if status != http.StatusOK || tr.AccessToken == "" {
		t.Fatalf("token for %s: %d %s: %s", resource, status, tr.Error, tr.ErrorDescription)
	}
	if !strings.EqualFold(tr.TokenType, "Bearer") {
		t.Errorf("token_type %q", tr.TokenType)
	}
	return tr
}

type jwtHeader struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
}

type jwtClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      any    `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	Jti      string `json:"jti"`
	Scope    string `json:"scope"`
	ClientID string `json:"client_id"`
}

// decodeJWT splits a compact JWS without verifying it.
func decodeJWT(t *testing.T, token string) (jwtHeader, jwtClaims, map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %d parts", len(parts))
	}
	var h jwtHeader
	var c jwtClaims
	var raw map[string]any
	for i, dst := range []any{&h, &c, &raw} {
		seg := parts[min(i, 1)]
		b, err := base64.RawURLEncoding.DecodeString(seg)
		if err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
	}
	return h, c, raw
}

type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d"`
}

func b64int(t *testing.T, s string) *big.Int {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(b)
}

// b64fixed decodes a base64url coordinate into exactly n bytes, left-padded.
func b64fixed(t *testing.T, s string, n int) []byte {
	t.Helper()
	b := b64int(t, s).Bytes()
	if len(b) > n {
		t.Fatalf("coordinate of %d bytes, want %d", len(b), n)
	}
	return append(make([]byte, n-len(b)), b...)
}

// verifyJWS checks a compact JWS against the key with its kid: enough to
// show that the JWKS and the tokens belong together.
func verifyJWS(t *testing.T, token string, keys []jwk) {
	t.Helper()
	h, _, _ := decodeJWT(t, token)
	var k *jwk
	for i := range keys {
		if keys[i].Kid == h.Kid {
			k = &keys[i]
		}
	}
	if k == nil {
		t.Fatalf("no key %q in the JWKS", h.Kid)
	}
	dot := strings.LastIndexByte(token, '.')
	sig, err := base64.RawURLEncoding.DecodeString(token[dot+1:])
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(token[:dot]))
	switch h.Alg {
	case "RS256":
		pub := &rsa.PublicKey{N: b64int(t, k.N), E: int(b64int(t, k.E).Int64())}
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
			t.Fatalf("RS256 signature: %v", err)
		}
	case "ES256":
		if k.Crv != "P-256" || len(sig) != 64 {
			t.Fatalf("ES256 with crv %q and a %d-byte signature", k.Crv, len(sig))
		}
		point := append([]byte{4}, append(b64fixed(t, k.X, 32), b64fixed(t, k.Y, 32)...)...)
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), point)
		if err != nil {
			t.Fatalf("ES256 key: %v", err)
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		if !ecdsa.Verify(pub, digest[:], r, s) {
			t.Fatal("ES256 signature does not verify")
		}
	default:
		t.Fatalf("unexpected alg %q", h.Alg)
	}
}

type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope"`
	ClientID  string `json:"client_id"`
	Aud       any    `json:"aud"`
	Iss       string `json:"iss"`
	Exp       int64  `json:"exp"`
	Iat       int64  `json:"iat"`
	TokenType string `json:"token_type"`
	Error     string `json:"error"`
}

func introspect(t *testing.T, info mcptest.AuthServer, id, secret, token string) (int, introspection) {
	t.Helper()
	var out introspection
	status := postForm(t, info.IntrospectionEndpoint, id, secret, url.Values{"token": {token}}, &out)
	return status, out
}

func skipUnlessEnabled(t *testing.T) {
	if os.Getenv("WYMCP_E2E_OAUTH") != "1" {
		t.Skip("set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth/start.sh)")
	}
}

// Two MCP servers' resource URIs, as the library's e2e test would use them.
const (
	audA = "http://127.0.0.1:41001/mcp"
	audB = "http://127.0.0.1:41002/mcp"
)

func TestAuthorizationServer(t *testing.T) {
	skipUnlessEnabled(t)
	info, stop := startServer(t)

	var keys struct{ Keys []jwk }
	getJSON(t, info.JWKSURI, &keys)

	t.Run("metadata", func(t *testing.T) {
		var md map[string]any
		getJSON(t, info.MetadataURL, &md)
		for field, want := range map[string]string{
			"issuer":                 info.Issuer,
			"jwks_uri":               info.JWKSURI,
			"token_endpoint":         info.TokenEndpoint,
			"introspection_endpoint": info.IntrospectionEndpoint,
		} {
			if md[field] != want {
				t.Errorf("metadata %s = %v, want %s", field, md[field], want)
			}
		}
		if strings.HasSuffix(info.Issuer, "/") {
			t.Errorf("issuer %q ends in a slash", info.Issuer)
		}
	})

	t.Run("jwks", func(t *testing.T) {
		found := false
		for _, k := range keys.Keys {
			if k.D != "" {
				t.Errorf("key %s publishes its private part", k.Kid)
			}
			if k.Kid == info.JWTKid {
				found = true
				if k.Alg != info.JWTAlg || k.Use != "sig" {
					t.Errorf("signing key %+v", k)
				}
			}
		}
		if !found {
			t.Errorf("signing key %s not in the JWKS", info.JWTKid)
		}
	})

	t.Run("jwt per audience", func(t *testing.T) {
		before := time.Now().Unix()
		for _, tc := range []struct{ aud, scope, want string }{
			{audA, "tools:echo", "tools:echo"},
			{audB, "tools:echo tools:add", "tools:echo tools:add"},
			// A scope the server does not know is dropped, not refused.
			{audA, "tools:echo tools:unknown", "tools:echo"},
		} {
			tr := mustToken(t, info, info.ClientID, info.ClientSecret, tc.aud, tc.scope)
			if tr.Scope != tc.want {
				t.Errorf("response scope %q, want %q", tr.Scope, tc.want)
			}
			h, c, raw := decodeJWT(t, tr.AccessToken)
			if h.Alg != info.JWTAlg || h.Kid != info.JWTKid || h.Typ != "at+jwt" {
				t.Errorf("header %+v", h)
			}
			if c.Iss != info.Issuer || c.Aud != tc.aud || c.Scope != tc.want ||
				c.ClientID != info.ClientID || c.Sub != info.ClientID || c.Jti == "" {
				t.Errorf("claims %+v", c)
			}
			if c.Iat < before-5 || c.Exp-c.Iat != info.TokenTTL || tr.ExpiresIn != info.TokenTTL {
				t.Errorf("iat %d exp %d expires_in %d, ttl %d", c.Iat, c.Exp, tr.ExpiresIn, info.TokenTTL)
			}
			verifyJWS(t, tr.AccessToken, keys.Keys)
			pretty, _ := json.Marshal(raw)
			t.Logf("header %+v claims %s", h, pretty)
		}
	})

	t.Run("client_secret_post twin", func(t *testing.T) {
		form := url.Values{
			"grant_type": {"client_credentials"}, "resource": {audA}, "scope": {"tools:add"},
			"client_id": {info.ClientID + "-post"}, "client_secret": {info.ClientSecret},
		}
		var tr tokenResponse
		if status := postForm(t, info.TokenEndpoint, "", "", form, &tr); status != http.StatusOK {
			t.Fatalf("%d %s: %s", status, tr.Error, tr.ErrorDescription)
		}
		_, c, _ := decodeJWT(t, tr.AccessToken)
		if c.Aud != audA || c.ClientID != info.ClientID+"-post" {
			t.Errorf("claims %+v", c)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		if status, tr := clientCredentials(t, info, info.ClientID, "wrong", audA, ""); status != http.StatusUnauthorized || tr.Error != "invalid_client" {
			t.Errorf("wrong secret: %d %+v", status, tr)
		}
		if status, tr := clientCredentials(t, info, info.ClientID, info.ClientSecret, "https://elsewhere.example/mcp", ""); status != http.StatusBadRequest || tr.Error != "invalid_target" {
			t.Errorf("foreign resource: %d %+v", status, tr)
		}
		// Without a resource the token has no audience and is opaque.
		tr := mustToken(t, info, info.ClientID, info.ClientSecret, "", "tools:echo")
		if strings.Count(tr.AccessToken, ".") != 0 {
			t.Errorf("token without resource looks like a JWT: %q", tr.AccessToken)
		}
	})

	t.Run("introspection", func(t *testing.T) {
		rsID, rsSecret := info.IntrospectionClientID, info.IntrospectionClientSecret
		tr := mustToken(t, info, info.OpaqueClientID, info.OpaqueClientSecret, audA, "tools:echo tools:add")
		if strings.Contains(tr.AccessToken, ".") {
			t.Fatalf("opaque client got a JWT")
		}
		status, in := introspect(t, info, rsID, rsSecret, tr.AccessToken)
		if status != http.StatusOK || !in.Active || in.Aud != audA || in.Scope != "tools:echo tools:add" ||
			in.ClientID != info.OpaqueClientID || in.Iss != info.Issuer || in.Exp <= time.Now().Unix() || in.TokenType != "Bearer" {
			t.Errorf("active token: %d %+v", status, in)
		}
		t.Logf("introspection of an opaque token: %+v", in)

		if status, in := introspect(t, info, rsID, rsSecret, "not-a-token"); status != http.StatusOK || in.Active {
			t.Errorf("unknown token: %d %+v", status, in)
		}
		if status, in := introspect(t, info, rsID, "wrong", tr.AccessToken); status != http.StatusUnauthorized || in.Error != "invalid_client" {
			t.Errorf("wrong resource-server secret: %d %+v", status, in)
		}
		if status, _ := introspect(t, info, "", "", tr.AccessToken); status != http.StatusBadRequest && status != http.StatusUnauthorized {
			t.Errorf("no client authentication: %d", status)
		}
		// Another client may not introspect someone else's token.
		if status, in := introspect(t, info, info.ClientID, info.ClientSecret, tr.AccessToken); status != http.StatusOK || in.Active {
			t.Errorf("foreign client: %d %+v", status, in)
		}
		// JWT access tokens are not introspectable at this server.
		jwt := mustToken(t, info, info.ClientID, info.ClientSecret, audA, "tools:echo")
		if status, in := introspect(t, info, rsID, rsSecret, jwt.AccessToken); status != http.StatusBadRequest || in.Error != "unsupported_token_type" {
			t.Errorf("JWT: %d %+v", status, in)
		}
		// Revoked: inactive from then on.
		if status := postForm(t, info.RevocationEndpoint, info.OpaqueClientID, info.OpaqueClientSecret, url.Values{"token": {tr.AccessToken}}, nil); status != http.StatusOK {
			t.Errorf("revocation: %d", status)
		}
		if status, in := introspect(t, info, rsID, rsSecret, tr.AccessToken); status != http.StatusOK || in.Active {
			t.Errorf("revoked token: %d %+v", status, in)
		}
	})

	t.Run("endpoint down", func(t *testing.T) {
		tr := mustToken(t, info, info.OpaqueClientID, info.OpaqueClientSecret, audA, "tools:echo")
		stop()
		_, err := tryPostForm(info.IntrospectionEndpoint, info.IntrospectionClientID, info.IntrospectionClientSecret, url.Values{"token": {tr.AccessToken}}, nil)
		if err == nil {
			t.Fatal("introspection answered after the server stopped")
		}
		t.Logf("introspection with the server stopped: %v", err)
	})
}

// TestRestrictedServer starts a second server the way the library's test
// would when it knows its MCP server's URL first: one allowed audience,
// ES256 signatures and a one-second token lifetime.
func TestRestrictedServer(t *testing.T) {
	skipUnlessEnabled(t)
	info, _ := startServer(t, "OAUTH_AUDIENCES="+audA, "OAUTH_JWT_ALG=ES256", "OAUTH_TOKEN_TTL=1", "OAUTH_QUIET=1")

	var keys struct{ Keys []jwk }
	getJSON(t, info.JWKSURI, &keys)
	tr := mustToken(t, info, info.ClientID, info.ClientSecret, audA, "tools:echo")
	h, c, _ := decodeJWT(t, tr.AccessToken)
	if h.Alg != "ES256" || c.Aud != audA || c.Exp-c.Iat != 1 {
		t.Errorf("header %+v claims %+v", h, c)
	}
	verifyJWS(t, tr.AccessToken, keys.Keys)

	if status, tr := clientCredentials(t, info, info.ClientID, info.ClientSecret, audB, ""); status != http.StatusBadRequest || tr.Error != "invalid_target" {
		t.Errorf("audience B on a server that allows only A: %d %+v", status, tr)
	}

	// The token lives one second counted in whole seconds (exp = iat + 1,
	// iat rounded down), so it may expire right after it is minted: an
	// inactive answer is wrong only before the second after the one it was
	// asked for in. Past that, try a new token.
	var opaque tokenResponse
	for attempt := 1; ; attempt++ {
		asked := time.Now()
		activeUntil := asked.Truncate(time.Second).Add(time.Second)
		opaque = mustToken(t, info, info.OpaqueClientID, info.OpaqueClientSecret, audA, "tools:echo")
		_, in := introspect(t, info, info.IntrospectionClientID, info.IntrospectionClientSecret, opaque.AccessToken)
		if in.Active {
			break
		}
		if answered := time.Now(); answered.Before(activeUntil) {
			t.Fatalf("token inactive %v after it was asked for, before it can have expired: %+v", answered.Sub(asked), in)
		} else if attempt == 5 {
			t.Fatalf("the token expired before its introspection five times (last after %v)", answered.Sub(asked))
		}
	}
	time.Sleep(2100 * time.Millisecond)
	if _, in := introspect(t, info, info.IntrospectionClientID, info.IntrospectionClientSecret, opaque.AccessToken); in.Active {
		t.Errorf("expired token still active: %+v", in)
	}
}
