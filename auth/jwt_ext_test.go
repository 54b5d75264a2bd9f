package auth_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// newJWTServer serves the test tools behind a JWT authenticator whose
// keys are fetched from a loopback JWKS holding keys.
func newJWTServer(t *testing.T, keys []testKey, opts *auth.JWKSOptions) (*mcptest.Endpoint, *jwksServer, *auth.JWT) {
	t.Helper()
	js := newJWKSServer(t, jwksDoc(keys))
	if opts == nil {
		opts = &auth.JWKSOptions{Logger: quiet}
	}
	set, err := auth.NewRemoteJWKS(js.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	return serveMCP(t, v), js, v
}

// TestJWT is the bearer-token matrix: tokens signed in the test with RSA
// and EC keys, checked against a JWKS served on loopback, each answer's
// status, challenge, code and id asserted exactly (docs/design.md §5
// auth rows).
func TestJWT(t *testing.T) {
	t.Parallel()
	rs, es, es384 := rsaKey("rs-1"), ecKey("ec-1"), ec384Key("ec384-1")
	hs, _, _ := newJWTServer(t, []testKey{rs, es, es384}, nil)

	now := time.Now()
	with := func(scope string, edit func(jwt.MapClaims)) jwt.MapClaims {
		c := claims(scope)
		if edit != nil {
			edit(c)
		}
		return c
	}
	pub, err := x509.MarshalPKIXPublicKey(&rsaKeys()[0].PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	hmacWithPublicKey := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(""))
		tok.Header["kid"] = rs.kid
		s, err := tok.SignedString(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unsigned := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, claims(""))
		tok.Header["kid"] = rs.kid
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tampered := func() string {
		parts := strings.Split(sign(t, rs, claims("tools:echo"), nil), ".")
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var c map[string]any
		_ = json.Unmarshal(payload, &c)
		c["scope"] = "tools:echo tools:admin"
		b, _ := json.Marshal(c)
		parts[1] = base64.RawURLEncoding.EncodeToString(b)
		return strings.Join(parts, ".")
	}

	cases := []struct {
		name      string
		token     string
		fresh     func() string // the token, when it must be signed as the subtest runs
		tool      string
		status    int
		code      int
		challenge string
	}{
		{name: "valid RS256", token: sign(t, rs, claims("tools:echo"), nil), status: 200},
		{name: "valid ES256", token: sign(t, es, claims("tools:echo"), nil), status: 200},
		{name: "valid ES384", token: sign(t, es384, claims(""), nil), status: 200},
		{name: "aud as an array", token: sign(t, rs, with("", func(c jwt.MapClaims) { c["aud"] = []string{"https://other.test", testAudience} }), nil), status: 200},
		{name: "typ JWT", token: sign(t, rs, claims(""), map[string]any{"typ": "JWT"}), status: 200},
		{name: "no typ", token: sign(t, rs, claims(""), map[string]any{"typ": nil}), status: 200},
		// Signed when its subtest runs (fresh), not here: a parallel
		// subtest may wait for a slot for longer than the leeway's margin.
		{name: "expired within the leeway", fresh: func() string {
			return sign(t, rs, with("", func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-10 * time.Second).Unix() }), nil)
		}, status: 200},
		{name: "expired", token: sign(t, rs, with("", func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token has expired")},
		{name: "not yet valid", token: sign(t, es, with("", func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Hour).Unix() }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token is not valid yet")},
		{name: "nbf past the range of time.Time", token: sign(t, es, with("", func(c jwt.MapClaims) { c["nbf"] = 1e300 }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token is not valid yet")},
		{name: "no exp", token: sign(t, rs, with("", func(c jwt.MapClaims) { delete(c, "exp") }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token lacks a required claim (exp, iss, aud)")},
		{name: "wrong audience", token: sign(t, rs, with("", func(c jwt.MapClaims) { c["aud"] = "https://other.example.test/mcp" }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token was issued for another resource")},
		{name: "audience with a trailing slash", token: sign(t, rs, with("", func(c jwt.MapClaims) { c["aud"] = testAudience + "/" }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token was issued for another resource")},
		{name: "no audience", token: sign(t, rs, with("", func(c jwt.MapClaims) { delete(c, "aud") }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token lacks a required claim (exp, iss, aud)")},
		{name: "wrong issuer", token: sign(t, rs, with("", func(c jwt.MapClaims) { c["iss"] = "https://evil.example.test" }), nil),
			status: 401, code: -32600, challenge: invalidToken("the token is from another issuer")},
		{name: "unknown key", token: sign(t, rsaKey2("rs-unknown"), claims(""), nil),
			status: 401, code: -32600, challenge: invalidToken("the token's signing key is unknown")},
		{name: "known kid, other key", token: sign(t, rsaKey2(rs.kid), claims(""), nil),
			status: 401, code: -32600, challenge: invalidToken("invalid token signature or algorithm")},
		{name: "alg none", token: unsigned(),
			status: 401, code: -32600, challenge: invalidToken("invalid token signature or algorithm")},
		{name: "HS256 with the RSA public key as the secret", token: hmacWithPublicKey(),
			status: 401, code: -32600, challenge: invalidToken("invalid token signature or algorithm")},
		{name: "RS256 naming the EC key", token: sign(t, testKey{kid: es.kid, alg: "RS256", signer: rs.signer}, claims(""), nil),
			status: 401, code: -32600, challenge: invalidToken("the token's signing key is unknown")},
		{name: "PS256 under a JWK that names RS256", token: sign(t, testKey{kid: rs.kid, alg: "PS256", signer: rs.signer}, claims(""), nil),
			status: 401, code: -32600, challenge: invalidToken("the token's signing key is unknown")},
		{name: "ES256 naming the P-384 key", token: sign(t, testKey{kid: es384.kid, alg: "ES256", signer: es.signer}, claims(""), nil),
			status: 401, code: -32600, challenge: invalidToken("the token's signing key is unknown")},
		{name: "tampered payload", token: tampered(),
			status: 401, code: -32600, challenge: invalidToken("invalid token signature or algorithm")},
		{name: "not an access token", token: sign(t, rs, claims(""), map[string]any{"typ": "dpop+jwt"}),
			status: 401, code: -32600, challenge: invalidToken("the token is not an access token (typ)")},
		{name: "critical header", token: sign(t, rs, claims(""), map[string]any{"crit": []string{"exp"}}),
			status: 401, code: -32600, challenge: invalidToken("the token has critical header parameters this server does not understand")},
		{name: "not a JWT", token: "abc.def",
			status: 401, code: -32600, challenge: invalidToken("malformed token")},
		{name: "missing scope", token: sign(t, rs, claims("tools:echo"), nil), tool: "admin",
			status: 200, code: -32602}, // answered as an unknown tool (docs/design.md §5)
		{name: "scope granted (scope)", token: sign(t, rs, claims("tools:echo tools:admin"), nil), tool: "admin", status: 200},
		{name: "scope granted (scp array)", token: sign(t, es, with("", func(c jwt.MapClaims) { c["scp"] = []string{"tools:admin"} }), nil), tool: "admin", status: 200},
		{name: "scope granted (scp string)", token: sign(t, es, with("", func(c jwt.MapClaims) { c["scp"] = "x tools:admin" }), nil), tool: "admin", status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tool := tc.tool
			if tool == "" {
				tool = "echo"
			}
			if tc.fresh != nil {
				tc.token = tc.fresh()
			}
			// Twice: the second answer comes from the verified-token cache
			// when the first passed, and must be the same.
			for range 2 {
				rep := hs.Send(t, bearer(mcptest.ToolCall(tool, `{}`), tc.token))
				if tc.code == 0 {
					expectCalled(t, rep, "user-42")
					continue
				}
				expectRefused(t, rep, tc.status, tc.code, "1", tc.challenge)
			}
		})
	}
}

// TestBearerRefusals: how the token is sent (RFC 6750): none, another
// scheme, in the query string, twice, malformed.
func TestBearerRefusals(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-1")
	hs, _, _ := newJWTServer(t, []testKey{rs}, nil)
	good := sign(t, rs, claims(""), nil)
	cases := []struct {
		name      string
		req       mcptest.RPC
		url       string
		status    int
		challenge string
	}{
		{name: "no Authorization", req: mcptest.ToolCall("echo", `{}`), status: 401, challenge: `Bearer ` + md},
		{name: "Basic", req: mcptest.ToolCall("echo", `{}`).With("Authorization", "Basic dXNlcjpwYXNz"), status: 401, challenge: `Bearer ` + md},
		{name: "Bearer without a token", req: mcptest.ToolCall("echo", `{}`).With("Authorization", "Bearer"), status: 401, challenge: invalidToken("malformed bearer token")},
		{name: "token with a space", req: mcptest.ToolCall("echo", `{}`).With("Authorization", "Bearer abc def"), status: 401, challenge: invalidToken("malformed bearer token")},
		{name: "token in the query string", req: mcptest.ToolCall("echo", `{}`), url: "?access_token=" + good, status: 400,
			challenge: `Bearer error="invalid_request", error_description="access tokens are accepted in the Authorization header only", ` + md},
		{name: "token in the query string and the header", req: bearer(mcptest.ToolCall("echo", `{}`), good), url: "?access_token=" + good, status: 400,
			challenge: `Bearer error="invalid_request", error_description="access tokens are accepted in the Authorization header only", ` + md},
		{name: "token in the query string, its name percent-encoded", req: bearer(mcptest.ToolCall("echo", `{}`), good), url: "?access%5Ftoken=" + good, status: 400,
			challenge: `Bearer error="invalid_request", error_description="access tokens are accepted in the Authorization header only", ` + md},
		{name: "two Authorization headers", req: bearer(mcptest.ToolCall("echo", `{}`), good).WithExtra("Authorization", "Bearer "+good), status: 400,
			challenge: `Bearer error="invalid_request", error_description="more than one Authorization header", ` + md},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ep := *hs
			ep.URL += tc.url
			expectRefused(t, ep.Send(t, tc.req), tc.status, -32600, "1", tc.challenge)
		})
	}
	// Lower-case scheme, extra spaces: accepted (RFC 9110: case-insensitive).
	expectCalled(t, hs.Send(t, mcptest.ToolCall("echo", `{}`).With("Authorization", "bearer   "+good)), "user-42")
}

// TestJWKSRotation: a token signed with a key the JWKS does not hold yet
// is refused; the authorization server rotates its keys; the new key is
// fetched on the next unknown kid, but not more than once per
// MinRefreshInterval however many such tokens arrive; and a key dropped
// from the set stops verifying tokens that were verified (and cached)
// with it.
func TestJWKSRotation(t *testing.T) {
	t.Parallel()
	old, next := rsaKey("2026-01"), rsaKey2("2026-02")
	const interval = 400 * time.Millisecond
	hs, js, _ := newJWTServer(t, []testKey{old}, &auth.JWKSOptions{MinRefreshInterval: interval, Logger: quiet})
	oldToken, newToken := sign(t, old, claims(""), nil), sign(t, next, claims(""), nil)

	// The first fetch is made between before and after: no refresh is
	// allowed until interval after before, and one is after interval after
	// after (a loaded machine can put a long time between the two).
	before := time.Now()
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), oldToken)), "user-42")
	after := time.Now()
	if n := js.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token, want 1", n)
	}
	unknown := invalidToken("the token's signing key is unknown")
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), newToken)), 401, -32600, "1", unknown)

	js.set(jwksDoc([]testKey{old, next})) // the rotation: the new key is published
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), newToken))
			if time.Since(before) < interval-50*time.Millisecond {
				expectRefused(t, rep, 401, -32600, "1", unknown)
			}
		})
	}
	wg.Wait()
	if n := js.fetches.Load(); n != 1 && time.Since(before) < interval {
		t.Errorf("%d fetches within MinRefreshInterval, want 1 (the refresh is rate-limited)", n)
	}
	time.Sleep(time.Until(after.Add(interval + 50*time.Millisecond)))
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), newToken)), "user-42")
	if n := js.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after the interval, want 2", n)
	}

	// The old key is retired. The set is refetched on the next unknown kid
	// (after the interval), and the old token, verified and cached before,
	// is refused from then on.
	js.set(jwksDoc([]testKey{next}))
	time.Sleep(interval + 50*time.Millisecond)
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), sign(t, ecKey("other"), claims(""), nil))), 401, -32600, "1", unknown)
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), oldToken)), 401, -32600, "1", unknown)
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), newToken)), "user-42")
}

// TestJWKSUnavailable: a JWKS that was never fetched because its server is
// down makes the token uncheckable: 503 with Retry-After, not 401.
func TestJWKSUnavailable(t *testing.T) {
	t.Parallel()
	js := newJWKSServer(t, jwksDoc([]testKey{rsaKey("k")}))
	js.Close()
	set, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{Timeout: time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	hs := serveMCP(t, v)
	rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), sign(t, rsaKey("k"), claims(""), nil)))
	expectRefused(t, rep, 503, -32603, "1", "")
	if got := rep.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q", got)
	}
	if err := set.Download(context.Background()); err == nil {
		t.Error("Download from a closed server succeeded")
	}
}

// TestJWKSBounds: a fetched set is bounded in size and key count, a set
// with a private key is refused whole, redirects are not followed, and
// only https (or http to loopback) URLs are accepted.
func TestJWKSBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := newJWKSServer(t, append(jwksDoc([]testKey{rsaKey("k")})[:0:0], []byte(`{"keys":[],"pad":"`+strings.Repeat("x", 2000)+`"}`)...))
	if set, _ := auth.NewRemoteJWKS(big.URL, &auth.JWKSOptions{MaxBytes: 1000, Logger: quiet}); set.Download(ctx) == nil {
		t.Error("an oversized JWKS was accepted")
	}
	many := newJWKSServer(t, jwksDoc([]testKey{rsaKey("a"), rsaKey("b"), rsaKey("c")}))
	if set, _ := auth.NewRemoteJWKS(many.URL, &auth.JWKSOptions{MaxKeys: 2, Logger: quiet}); set.Download(ctx) == nil {
		t.Error("a JWKS with too many keys was accepted")
	}
	private := newJWKSServer(t, jwksDoc([]testKey{rsaKey("a")}, map[string]any{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA", "d": "AA"}))
	if set, _ := auth.NewRemoteJWKS(private.URL, &auth.JWKSOptions{Logger: quiet}); set.Download(ctx) == nil {
		t.Error("a JWKS holding a private key was accepted")
	}
	good := newJWKSServer(t, jwksDoc([]testKey{rsaKey("a")}))
	redirect := newJWKSServer(t, nil)
	redirect.Config.Handler = http.RedirectHandler(good.URL, http.StatusFound)
	if set, _ := auth.NewRemoteJWKS(redirect.URL, &auth.JWKSOptions{Logger: quiet}); set.Download(ctx) == nil {
		t.Error("a redirect was followed")
	}
	if set, _ := auth.NewRemoteJWKS(good.URL, nil); set.Download(ctx) != nil {
		t.Error("a good JWKS was refused")
	}
	for _, u := range []string{"http://as.example.test/jwks", "ftp://127.0.0.1/jwks", "/jwks", "https://"} {
		if _, err := auth.NewRemoteJWKS(u, nil); err == nil {
			t.Errorf("NewRemoteJWKS(%q) accepted", u)
		}
	}
}

// TestParseJWKS: a local JWKS file; keys that cannot verify (symmetric,
// encryption, small RSA, unknown curves) are skipped, and a set with none
// left is refused.
func TestParseJWKS(t *testing.T) {
	t.Parallel()
	rs := rsaKey("file-key")
	noAlg := rsaKey2("no-alg").jwk()
	delete(noAlg, "alg")
	doc := jwksDoc([]testKey{rs}, noAlg,
		map[string]any{"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
		map[string]any{"kty": "RSA", "kid": "enc", "use": "enc", "n": rs.jwk()["n"], "e": "AQAB"},
		map[string]any{"kty": "RSA", "kid": "small", "n": b64(make([]byte, 128)), "e": "AQAB"},
		map[string]any{"kty": "EC", "kid": "p521", "crv": "P-521", "x": "AA", "y": "AA"},
		map[string]any{"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": "AA"})
	set, err := auth.ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	hs := serveMCP(t, v)
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), sign(t, rs, claims(""), nil))), "user-42")
	// A JWK without alg verifies any RSA algorithm, RS* and PS*.
	for _, alg := range []string{"RS384", "PS256", "PS512"} {
		k := testKey{kid: "no-alg", alg: alg, signer: rsaKeys()[1]}
		expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), sign(t, k, claims(""), nil))), "user-42")
	}
	// A token naming the symmetric key, HMAC-signed with its secret.
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(""))
	tok.Header["kid"] = "hmac"
	s, _ := tok.SignedString([]byte("secret"))
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), s)), 401, -32600, "1", invalidToken("invalid token signature or algorithm"))

	for name, doc := range map[string]string{
		"not JSON":   `keys`,
		"no keys":    `{}`,
		"only oct":   `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`,
		"duplicates": `{"keys":[],"keys":[]}`,
	} {
		if _, err := auth.ParseJWKS([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestJWTConstruction: the issuer, the audience and the keys are required.
func TestJWTConstruction(t *testing.T) {
	t.Parallel()
	set, err := auth.ParseJWKS(jwksDoc([]testKey{rsaKey("k")}))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][2]string{{"", testAudience}, {testIssuer, ""}} {
		if _, err := auth.NewJWT(args[0], args[1], set, nil); err == nil {
			t.Errorf("NewJWT(%q, %q) accepted", args[0], args[1])
		}
	}
	if _, err := auth.NewJWT(testIssuer, testAudience, nil, nil); err == nil {
		t.Error("NewJWT without keys accepted")
	}
}

// TestJWKSFirstFetchShared: requests that arrive together before the set
// was ever fetched share one fetch, and all pass.
func TestJWKSFirstFetchShared(t *testing.T) {
	t.Parallel()
	rs := rsaKey("k")
	hs, js, _ := newJWTServer(t, []testKey{rs}, nil)
	token := sign(t, rs, claims(""), nil)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token)), "user-42") })
	}
	wg.Wait()
	if n := js.fetches.Load(); n != 1 {
		t.Errorf("%d fetches for 20 concurrent first requests, want 1", n)
	}
}

// mustJWT returns the verifier of the test issuer and audience over set.
func mustJWT(t testing.TB, set *auth.JWKS) *auth.JWT {
	t.Helper()
	v, err := auth.NewJWT(testIssuer, testAudience, set, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
