package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAuthFlagUsage: every -auth-* mistake is a usage error (exit 2) that
// names the flag, before anything listens.
func TestAuthFlagUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badJWKS := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(badJWKS, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	iss := "https://as.example.test"
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"audience without issuer", []string{"-auth-audience", "https://mcp.example.test/mcp"}, "-auth-audience needs -auth-issuer"},
		{"jwks without issuer", []string{"-auth-jwks", "keys.json"}, "-auth-jwks needs -auth-issuer"},
		{"introspect without issuer", []string{"-auth-introspect", "https://as.example.test/introspect"}, "-auth-introspect needs -auth-issuer"},
		{"scope without issuer", []string{"-auth-scope", "echo=a"}, "-auth-scope needs -auth-issuer"},
		{"required scope without issuer", []string{"-auth-required-scope", "a"}, "-auth-required-scope needs -auth-issuer"},
		{"scope challenge without issuer", []string{"-auth-scope-challenge"}, "-auth-scope-challenge needs -auth-issuer"},
		{"issuer alone", []string{"-auth-issuer", iss}, "-auth-issuer needs -auth-jwks"},
		{"issuer not a URL", []string{"-auth-issuer", "as.example.test", "-auth-jwks", "k"}, "must be an absolute http(s) URL"},
		{"introspect without credentials", []string{"-auth-issuer", iss, "-auth-introspect", iss + "/introspect"}, "needs -auth-client-id and -auth-client-secret-file"},
		{"credentials without introspect", []string{"-auth-issuer", iss, "-auth-jwks", "k", "-auth-client-id", "x"}, "are for -auth-introspect"},
		{"scope without =", []string{"-auth-scope", "echo"}, "want TOOL=SCOPE"},
		{"bad scope", []string{"-auth-scope", "echo=a b"}, "invalid scope"},
		{"bad required scope", []string{"-auth-required-scope", `a"b`}, "invalid scope"},
		{"unknown tool", []string{"-auth-issuer", iss, "-auth-jwks", badJWKS, "-auth-scope", "nope=a"}, `no tool "nope"`},
		{"no host for the audience", []string{"-addr", ":0", "-auth-issuer", iss, "-auth-jwks", "k"}, "set -auth-audience"},
		{"unusable JWKS file", []string{"-auth-issuer", iss, "-auth-jwks", badJWKS}, "-auth-jwks"},
		{"missing JWKS file", []string{"-auth-issuer", iss, "-auth-jwks", filepath.Join(dir, "nope.json")}, "-auth-jwks"},
		{"JWKS over plain http", []string{"-auth-issuer", iss, "-auth-jwks", "http://as.example.test/jwks"}, "loopback"},
		{"empty secret file", []string{"-auth-issuer", iss, "-auth-introspect", "https://as.example.test/i", "-auth-client-id", "rs", "-auth-client-secret-file", empty}, "is empty"},
		{"audience with a fragment", []string{"-auth-issuer", iss, "-auth-jwks", "https://as.example.test/jwks", "-auth-audience", "https://mcp.example.test/mcp#x"}, "-auth-audience"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			args := tt.args
			if args[0] != "-addr" {
				args = append([]string{"-addr", "127.0.0.1:0"}, args...)
			}
			err := run(t.Context(), args, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 2 {
				t.Errorf("exit code = %d (err %v), want 2", code, err)
			}
			if !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.msg)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// es256 signs JWT access tokens with a P-256 key, on the standard library
// alone (RFC 7515 §A.3: the signature is r||s, 32 bytes each).
type es256 struct {
	key *ecdsa.PrivateKey
	kid string
}

func newES256(t *testing.T, kid string) *es256 {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &es256{key: k, kid: kid}
}

// jwks is the key's JWK Set document.
func (s *es256) jwks() []byte {
	b, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "crv": "P-256", "kid": s.kid, "alg": "ES256", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(s.key.X.FillBytes(make([]byte, 32))),
		"y": base64.RawURLEncoding.EncodeToString(s.key.Y.FillBytes(make([]byte, 32))),
	}}})
	return b
}

func (s *es256) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": s.kid}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(input))
	r, ss, err := ecdsa.Sign(rand.Reader, s.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := append(r.FillBytes(make([]byte, 32)), ss.FillBytes(make([]byte, 32))...)
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// authPost sends one tools/call or tools/list with a bearer token ("" for
// none) and returns the response and its body.
func authPost(t *testing.T, url, token, method, tool string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + `}}`
	if tool != "" {
		body = callBody(tool, `{"text":"hi"}`)
		if tool == "add" {
			body = callBody(tool, `{"a":1,"b":2}`)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if tool != "" {
		req.Header.Set("Mcp-Name", tool)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestAuthServe: the flags put the server behind JWT auth with a local
// JWKS file: the default audience is the server's own URL, the metadata is
// mounted at both well-known paths, -auth-scope scopes a tool (hidden from
// a caller without it, whose call of it is answered as an unknown tool's:
// hidden_test.go), -auth-required-scope gates every request.
func TestAuthServe(t *testing.T) {
	t.Parallel()
	signer := newES256(t, "k1")
	keys := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(keys, signer.jwks(), 0o600); err != nil {
		t.Fatal(err)
	}
	const iss = "https://as.example.test"
	s := start(t, "-auth-issuer", iss, "-auth-jwks", keys,
		"-auth-scope", "add=tools:add", "-auth-scope", "bad_result=tools:admin,tools:add", "-auth-required-scope", "mcp")
	base := strings.TrimSuffix(s.url, "/mcp")
	metadata := base + "/.well-known/oauth-protected-resource/mcp"
	token := func(aud, scope string) string {
		return signer.sign(t, map[string]any{"iss": iss, "aud": aud, "sub": "ada", "scope": scope, "exp": time.Now().Add(time.Hour).Unix()})
	}

	resp, _ := authPost(t, s.url, "", "tools/call", "echo")
	if want := `Bearer resource_metadata="` + metadata + `", scope="mcp"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp, body := authPost(t, s.url, token(s.url, "mcp"), "tools/call", "echo")
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"hi"`) {
		t.Errorf("valid token: %d %s", resp.StatusCode, body)
	}
	resp, _ = authPost(t, s.url, token("http://127.0.0.1:1/mcp", "mcp"), "tools/call", "echo")
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("another audience: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, _ = authPost(t, s.url, token(s.url, "tools:add"), "tools/call", "echo")
	if resp.StatusCode != 403 {
		t.Errorf("without the required scope: %d", resp.StatusCode)
	}
	resp, body = authPost(t, s.url, token(s.url, "mcp"), "tools/call", "add")
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: add"}}`; resp.StatusCode != 200 || body != want || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("scoped tool: %d %q %s, want 200 %s, as for an unknown tool", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, want)
	}
	resp, body = authPost(t, s.url, token(s.url, "mcp tools:add"), "tools/call", "add")
	if resp.StatusCode != 200 || !strings.Contains(body, `"sum":3`) {
		t.Errorf("scoped tool with its scope: %d %s", resp.StatusCode, body)
	}
	_, body = authPost(t, s.url, token(s.url, "mcp"), "tools/list", "")
	if strings.Contains(body, `"name":"add"`) || !strings.Contains(body, `"name":"echo"`) || !strings.Contains(body, `"cacheScope":"private"`) {
		t.Errorf("tools/list without tools:add: %s", body)
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"resource":"` + s.url + `","authorization_servers":["` + iss + `"],"scopes_supported":["mcp","tools:add","tools:admin"],"bearer_methods_supported":["header"]}`
		if resp.StatusCode != 200 || string(b) != want || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s: %d %s\nwant %s", path, resp.StatusCode, b, want)
		}
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/.well-known/oauth-protected-resource", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("POST to the metadata: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestAuthReadyzWaitsForJWKS: with -auth-jwks a URL whose server is down
// (and -auth-introspect too, the authenticator that picks by the token's
// shape), /readyz answers 503 "auth not ready" while no key set was ever
// fetched, as every JWT would be answered 503; once the JWKS answers it is
// fetched within its retry backoff and /readyz turns 200.
func TestAuthReadyzWaitsForJWKS(t *testing.T) {
	t.Parallel()
	signer := newES256(t, "k1")
	var down atomic.Bool
	down.Store(true)
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(signer.jwks())
	}))
	t.Cleanup(js.Close)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	const iss = "https://as.example.test"
	s := start(t, "-auth-issuer", iss, "-auth-jwks", js.URL,
		"-auth-introspect", js.URL+"/introspect", "-auth-client-id", "rs", "-auth-client-secret-file", secret)
	readyz := strings.TrimSuffix(s.url, "/mcp") + "/readyz"
	get := func() (int, string) {
		resp, err := http.Get(readyz)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(); code != 503 || body != "auth not ready\n" {
		t.Fatalf("/readyz while the JWKS is down: %d %q, want 503 \"auth not ready\\n\"", code, body)
	}
	down.Store(false)
	deadline := time.Now().Add(30 * time.Second) // the backoff starts at 1 s
	for {
		code, body := get()
		if code == 200 && body == "ready\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %d %q 30 s after the JWKS came back", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	token := signer.sign(t, map[string]any{"iss": iss, "aud": s.url, "sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	if resp, body := authPost(t, s.url, token, "tools/call", "echo"); resp.StatusCode != 200 || !strings.Contains(body, `"text":"hi"`) {
		t.Errorf("a JWT once ready: %d %s", resp.StatusCode, body)
	}
}
