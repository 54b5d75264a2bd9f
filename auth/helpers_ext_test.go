package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The identities of the tests' tokens and server.
const (
	testIssuer   = "https://as.example.test"
	testAudience = "https://mcp.example.test/mcp"
	testMetadata = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
	md           = `resource_metadata="` + testMetadata + `"`
)

// quiet discards the logs of the tests that make fetches fail.
var quiet = slog.New(slog.DiscardHandler)

// testKey is a signing key of the tests' authorization server.
type testKey struct {
	kid    string
	alg    string
	signer any // *rsa.PrivateKey or *ecdsa.PrivateKey
}

// Keys are made once per test binary: a 2048-bit RSA key takes a while.
var (
	rsaKeys = sync.OnceValue(func() [2]*rsa.PrivateKey {
		var ks [2]*rsa.PrivateKey
		for i := range ks {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			ks[i] = k
		}
		return ks
	})
	ecKeys = sync.OnceValue(func() [2]*ecdsa.PrivateKey {
		var ks [2]*ecdsa.PrivateKey
		for i, c := range []elliptic.Curve{elliptic.P256(), elliptic.P384()} {
			k, err := ecdsa.GenerateKey(c, rand.Reader)
			if err != nil {
				panic(err)
			}
			ks[i] = k
		}
		return ks
	})
)

func rsaKey(kid string) testKey { return testKey{kid: kid, alg: "RS256", signer: rsaKeys()[0]} }

// rsaKey2 is a second RSA key, the one a rotation brings in.
func rsaKey2(kid string) testKey { return testKey{kid: kid, alg: "RS256", signer: rsaKeys()[1]} }
func ecKey(kid string) testKey   { return testKey{kid: kid, alg: "ES256", signer: ecKeys()[0]} }
func ec384Key(kid string) testKey {
	return testKey{kid: kid, alg: "ES384", signer: ecKeys()[1]}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk returns k's public JWK, as an authorization server publishes it.
func (k testKey) jwk() map[string]any {
	switch s := k.signer.(type) {
	case *rsa.PrivateKey:
		return map[string]any{"kty": "RSA", "kid": k.kid, "alg": k.alg, "use": "sig",
			"n": b64(s.N.Bytes()), "e": b64(big.NewInt(int64(s.E)).Bytes())}
	case *ecdsa.PrivateKey:
		size := (s.Curve.Params().BitSize + 7) / 8
		crv := "P-256"
		if size == 48 {
			crv = "P-384"
		}
		return map[string]any{"kty": "EC", "kid": k.kid, "alg": k.alg, "use": "sig", "crv": crv,
			"x": b64(s.X.FillBytes(make([]byte, size))), "y": b64(s.Y.FillBytes(make([]byte, size)))}
	}
	panic("unknown key")
}

// jwksDoc is the JWK Set of keys, with any extra raw JWKs.
func jwksDoc(keys []testKey, extra ...map[string]any) []byte {
	var list []map[string]any
	for _, k := range keys {
		list = append(list, k.jwk())
	}
	list = append(list, extra...)
	b, err := json.Marshal(map[string]any{"keys": list})
	if err != nil {
		panic(err)
	}
	return b
}

// claims returns the claims of a valid token granting scope.
func claims(scope string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": testIssuer, "aud": testAudience, "sub": "user-42", "client_id": "mcp-client",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "j1",
	}
	if scope != "" {
		c["scope"] = scope
	}
	return c
}

// sign signs c with k, as an at+jwt with k's kid; header entries override.
func sign(t testing.TB, k testKey, c jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(k.alg), c)
	tok.Header["kid"] = k.kid
	tok.Header["typ"] = "at+jwt"
	for h, v := range header {
		if v == nil {
			delete(tok.Header, h)
		} else {
			tok.Header[h] = v
		}
	}
	s, err := tok.SignedString(k.signer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jwksServer serves a JWK Set on loopback that a test can rotate, and
// counts its fetches.
type jwksServer struct {
	*httptest.Server
	doc     atomic.Pointer[[]byte]
	fetches atomic.Int32
}

func newJWKSServer(t testing.TB, doc []byte) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.set(doc)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*s.doc.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) set(doc []byte) { s.doc.Store(&doc) }

// serveMCP serves the test tools behind authn: echo, for any caller, and
// admin, which needs tools:admin. Both answer the caller's subject, or
// "client <id>" for a principal without one.
func serveMCP(t testing.TB, authn wymcp.Authenticator) *mcptest.Endpoint {
	t.Helper()
	who := func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
		p := wymcp.PrincipalFrom(ctx)
		if p.Subject == "" {
			return protocol.TextResult("client " + p.ClientID), nil
		}
		return protocol.TextResult(p.Subject), nil
	}
	ts := []*tools.Tool{
		tools.Must(tools.NewRaw("echo", "Says who called.", []byte(`{"type":"object"}`), who)),
		tools.Must(tools.NewRaw("admin", "Says who called; needs tools:admin.", []byte(`{"type":"object"}`), who, tools.WithScopes("tools:admin"))),
	}
	info := protocol.Implementation{Name: "auth-test", Version: "1.0.0"}
	srv, err := wymcp.New(info, &wymcp.Options{
		Logger: slog.New(slog.DiscardHandler),
		Auth:   &wymcp.AuthOptions{Authenticator: authn, ResourceMetadata: testMetadata},
	}, ts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return mcptest.Serve(t, srv, info)
}

// bearer sets r's Authorization to a bearer token.
func bearer(r mcptest.RPC, token string) mcptest.RPC { return r.With("Authorization", "Bearer "+token) }

// expectRefused asserts a refusal: status, JSON-RPC code and id, and the
// exact challenge ("" for none).
func expectRefused(t *testing.T, rep mcptest.Reply, status, code int, id, challenge string) {
	t.Helper()
	rep.ExpectError(t, status, code, id)
	got := rep.Header.Values("WWW-Authenticate")
	if challenge == "" && len(got) != 0 || challenge != "" && (len(got) != 1 || got[0] != challenge) {
		t.Errorf("WWW-Authenticate = %q\n                want %q", got, challenge)
	}
}

// expectCalled asserts a 200 tools/call result naming subject.
func expectCalled(t *testing.T, rep mcptest.Reply, subject string) {
	t.Helper()
	if rep.Status != 200 {
		// Which refusal: the body's message is the same for every one.
		t.Logf("WWW-Authenticate: %q", rep.Header.Get("WWW-Authenticate"))
	}
	res := rep.ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); isErr || text != subject {
		t.Errorf("tool answered %q (isError %v), want %q", text, isErr, subject)
	}
}

// invalidToken is the challenge of a refused token.
func invalidToken(desc string) string {
	return `Bearer error="invalid_token", error_description="` + desc + `", ` + md
}
