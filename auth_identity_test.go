package wymcp_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The caller's identity, what per-caller state binds to (docs/design.md
// §3 stage 3): never empty, never shared by accident, users and clients
// apart.

const (
	jwtIssuer   = "https://as.example.test"
	jwtAudience = "https://mcp.example.test/mcp"
)

// jwtSigner is an authorization server's signing key, for tests that need
// the real auth.JWT in front of the server.
type jwtSigner struct {
	key *ecdsa.PrivateKey
	doc []byte // its JWK Set
}

func newJWTSigner(t testing.TB) *jwtSigner {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
		"x": b64(k.X.FillBytes(make([]byte, 32))), "y": b64(k.Y.FillBytes(make([]byte, 32))),
	}}})
	return &jwtSigner{key: k, doc: doc}
}

// token signs an access token with the given identity claims.
func (s *jwtSigner) token(t testing.TB, identity jwt.MapClaims) string {
	t.Helper()
	c := jwt.MapClaims{"iss": jwtIssuer, "aud": jwtAudience, "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range identity {
		c[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = "k1"
	tok.Header["typ"] = "at+jwt"
	signed, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// newJWTRoundServer serves roundTools behind the real auth.JWT.
func newJWTRoundServer(t *testing.T, s *jwtSigner) *mcptest.Endpoint {
	t.Helper()
	keys, err := auth.ParseJWKS(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWT(jwtIssuer, jwtAudience, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := protocol.Implementation{Name: "wymcp-identity", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{
		Logger:    slog.New(slog.DiscardHandler),
		StateKeys: [][]byte{key(3)},
		Auth:      &wymcp.AuthOptions{Authenticator: v, ResourceMetadata: testMetadata},
	}, roundTools(t)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return mcptest.Serve(t, srv, info)
}

// TestRequestStateBoundToCaller: a requestState sealed for one caller
// does not open for another: not for a client named as the user was (one
// namespace for users, another for clients), not for the same user through
// another OAuth client (issue 38: the clients hold different grants), and
// tokens whose sub is not
// a string, which used to bind all alike as "", are refused 401
// invalid_token before any state is sealed for them.
func TestRequestStateBoundToCaller(t *testing.T) {
	t.Parallel()
	s := newJWTSigner(t)
	hs := newJWTRoundServer(t, s)
	alice := s.token(t, jwt.MapClaims{"sub": "alice", "client_id": "app"})
	clientAlice := s.token(t, jwt.MapClaims{"client_id": "alice"})
	azpAlice := s.token(t, jwt.MapClaims{"azp": "alice"})
	aliceOtherApp := s.token(t, jwt.MapClaims{"sub": "alice", "client_id": "other-app"})
	aliceNoClient := s.token(t, jwt.MapClaims{"sub": "alice"})
	step1 := `{"step1":` + adaAnswer + `}`
	retry := func(state, token string) mcptest.RPC {
		return bearer(call("steps", `{"topic":"paint"}`).WithID(7).Retry(step1, state), token)
	}

	_, userState := hs.Send(t, bearer(call("steps", `{"topic":"paint"}`), alice)).ExpectInputRequired(t, "1")
	_, clientState := hs.Send(t, bearer(call("steps", `{"topic":"paint"}`), clientAlice)).ExpectInputRequired(t, "1")
	for name, tc := range map[string]struct{ state, token string }{
		"the user's state, the client of the same name": {userState, clientAlice},
		"the user's state, azp of the same name":        {userState, azpAlice},
		"the client's state, the user of the same name": {clientState, alice},
		"the user's state, another client of the user":  {userState, aliceOtherApp},
		"the user's state, the user without a client":   {userState, aliceNoClient},
	} {
		rep := hs.Send(t, retry(tc.state, tc.token))
		rep.ExpectError(t, 200, -32602, "7")
		if rep.Msg.Error.Message != stateError {
			t.Errorf("%s: message %q, want %q", name, rep.Msg.Error.Message, stateError)
		}
	}
	// Each opens its own, and a client's is the same whichever claim
	// names it.
	hs.Send(t, retry(userState, alice)).ExpectInputRequired(t, "7")
	// Another token of the same user and client opens it.
	hs.Send(t, retry(userState, s.token(t, jwt.MapClaims{"sub": "alice", "client_id": "app", "jti": "2"}))).ExpectInputRequired(t, "7")
	hs.Send(t, retry(clientState, clientAlice)).ExpectInputRequired(t, "7")
	hs.Send(t, retry(clientState, azpAlice)).ExpectInputRequired(t, "7")

	// Numeric, empty and absent subjects are refused, not bound as "".
	invalid := func(desc string) string {
		return `Bearer error="invalid_token", error_description="` + desc + `", resource_metadata="` + testMetadata + `"`
	}
	for name, tc := range map[string]struct {
		claims jwt.MapClaims
		desc   string
	}{
		"sub 12345":      {jwt.MapClaims{"sub": 12345}, "the token's subject (sub) is not a non-empty string"},
		"sub 67890":      {jwt.MapClaims{"sub": 67890, "client_id": "app"}, "the token's subject (sub) is not a non-empty string"},
		"empty sub":      {jwt.MapClaims{"sub": ""}, "the token's subject (sub) is not a non-empty string"},
		"nobody":         {jwt.MapClaims{}, "the token names no subject or client (sub, client_id, azp)"},
		"numeric client": {jwt.MapClaims{"client_id": 12345}, "the token's client (client_id, azp) is not a non-empty string"},
		"fractional sub": {jwt.MapClaims{"sub": 1.5e3}, "the token's subject (sub) is not a non-empty string"},
	} {
		token := s.token(t, tc.claims)
		for id, req := range map[string]mcptest.RPC{
			"1": bearer(call("steps", `{"topic":"paint"}`), token), // a first round
			"7": retry(userState, token),                           // another's state
		} {
			rep := hs.Send(t, req)
			rep.ExpectError(t, 401, -32600, id)
			if got := rep.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != invalid(tc.desc) {
				t.Errorf("%s: WWW-Authenticate %q, want %q", name, got, invalid(tc.desc))
			}
		}
	}
}

// TestPrincipalWithoutIdentityRefused: a custom authenticator's principal
// with neither a Subject nor a ClientID is refused 401 invalid_token, as a
// nil principal is: an authenticator must say who. A subject and a client
// of one name are two callers.
func TestPrincipalWithoutIdentityRefused(t *testing.T) {
	t.Parallel()
	authn := wymcp.AuthenticatorFunc(func(_ context.Context, r *http.Request) (*wymcp.Principal, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer anonymous":
			return &wymcp.Principal{Scopes: []string{"mcp"}}, nil
		case "Bearer user":
			return &wymcp.Principal{Subject: "alice", Scopes: []string{"mcp"}}, nil
		case "Bearer client":
			return &wymcp.Principal{ClientID: "alice", Scopes: []string{"mcp"}}, nil
		}
		return nil, &wymcp.AuthError{Code: wymcp.AuthNoToken}
	})
	info := protocol.Implementation{Name: "wymcp-identity", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{
		Logger:    slog.New(slog.DiscardHandler),
		StateKeys: [][]byte{key(4)},
		Auth:      &wymcp.AuthOptions{Authenticator: authn, ResourceMetadata: testMetadata, RequiredScopes: []string{"mcp"}},
	}, roundTools(t)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	hs := mcptest.Serve(t, srv, info)

	rep := hs.Send(t, bearer(call("steps", `{"topic":"paint"}`), "anonymous"))
	rep.ExpectError(t, 401, -32600, "1")
	want := `Bearer error="invalid_token", resource_metadata="` + testMetadata + `", scope="mcp"`
	if got := rep.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != want {
		t.Errorf("WWW-Authenticate %q, want %q", got, want)
	}

	_, userState := hs.Send(t, bearer(call("steps", `{"topic":"paint"}`), "user")).ExpectInputRequired(t, "1")
	step1 := `{"step1":` + adaAnswer + `}`
	rep = hs.Send(t, bearer(call("steps", `{"topic":"paint"}`).WithID(7).Retry(step1, userState), "client"))
	rep.ExpectError(t, 200, -32602, "7")
	if rep.Msg.Error.Message != stateError {
		t.Errorf("message %q, want %q", rep.Msg.Error.Message, stateError)
	}
	hs.Send(t, bearer(call("steps", `{"topic":"paint"}`).WithID(7).Retry(step1, userState), "user")).ExpectInputRequired(t, "7")
}

// TestReadinessWaitsForAuthKeys: while the authenticator cannot verify
// any token (a JWKS never fetched: every call would be 503), readiness is
// 503 "auth not ready"; once the JWKS answers it is fetched promptly (its
// retry backoff, not MinRefreshInterval) and readiness is 200, without a
// single call.
func TestReadinessWaitsForAuthKeys(t *testing.T) {
	t.Parallel()
	s := newJWTSigner(t)
	var down atomic.Bool
	down.Store(true)
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = w.Write(s.doc)
	}))
	t.Cleanup(js.Close)
	keys, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{
		RetryInterval: 20 * time.Millisecond, MinRefreshInterval: time.Hour, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWT(jwtIssuer, jwtAudience, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := protocol.Implementation{Name: "wymcp-ready", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{
		Logger: slog.New(slog.DiscardHandler),
		Auth:   &wymcp.AuthOptions{Authenticator: v, ResourceMetadata: testMetadata},
	}, tools.Must(tools.New("hi", "Says hi.", func(context.Context, struct{}) (string, error) { return "hi", nil })))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ready := srv.ReadinessHandler()
	probe := func(method string) (int, string, http.Header) {
		w := httptest.NewRecorder()
		ready.ServeHTTP(w, httptest.NewRequest(method, "/readyz", nil))
		return w.Code, w.Body.String(), w.Header()
	}

	for range 3 {
		if code, body, hdr := probe(http.MethodGet); code != 503 || body != "auth not ready\n" ||
			hdr.Get("Content-Type") != "text/plain; charset=utf-8" || hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("GET while the JWKS is down: %d %q %v", code, body, hdr)
		}
		time.Sleep(30 * time.Millisecond)
	}
	if code, body, _ := probe(http.MethodHead); code != 503 || body != "" {
		t.Errorf("HEAD while the JWKS is down: %d %q", code, body)
	}
	if code, _, hdr := probe(http.MethodPost); code != 405 || hdr.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", code, hdr.Get("Allow"))
	}

	down.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, _ := probe(http.MethodGet)
		if code == 200 && body == "ready\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readiness %d %q 30 s after the JWKS came back", code, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	hs := mcptest.Serve(t, srv, info)
	res := hs.Send(t, bearer(mcptest.ToolCall("hi", `{}`), s.token(t, jwt.MapClaims{"sub": "alice"}))).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); text != `"hi"` || isErr {
		t.Errorf("tool answered %q (isError %v)", text, isErr)
	}

	// A drain says so, whatever the authenticator.
	go func() { _ = srv.Drain(context.Background()) }()
	for !srv.Draining() {
		time.Sleep(time.Millisecond)
	}
	if code, body, _ := probe(http.MethodGet); code != 503 || body != "draining\n" {
		t.Errorf("draining: %d %q", code, body)
	}
}
