package auth_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// asIntrospection is an RFC 7662 endpoint on loopback: it checks the
// resource server's Basic credentials and answers from a table of tokens.
type asIntrospection struct {
	*httptest.Server
	calls atomic.Int32
	delay time.Duration
}

const (
	rsID     = "wymcp-resource-server"
	rsSecret = "s3cret:with/odd&chars"
)

func newIntrospectionServer(t *testing.T) *asIntrospection {
	t.Helper()
	exp := time.Now().Add(time.Hour).Unix()
	answers := map[string]map[string]any{
		"active":      {"active": true, "client_id": "opaque-client", "scope": "tools:echo", "aud": testAudience, "iss": testIssuer, "exp": exp, "token_type": "Bearer"},
		"admin":       {"active": true, "sub": "user-7", "client_id": "opaque-client", "scope": "tools:echo tools:admin", "aud": []string{"x", testAudience}, "exp": exp},
		"other":       {"active": true, "client_id": "c", "aud": "https://other.example.test/mcp", "exp": exp},
		"no-exp":      {"active": true, "client_id": "c", "aud": testAudience},
		"old":         {"active": true, "client_id": "c", "aud": testAudience, "exp": time.Now().Add(-time.Hour).Unix()},
		"foreign-iss": {"active": true, "client_id": "c", "aud": testAudience, "exp": exp, "iss": "https://evil.example.test"},
		"dpop":        {"active": true, "client_id": "c", "aud": testAudience, "exp": exp, "token_type": "DPoP"},
		// Past what time.Unix holds (FuzzIntrospectionAnswer): this nbf
		// used to wrap around to the past and pass.
		"nbf-max": {"active": true, "client_id": "c", "aud": testAudience, "exp": exp, "nbf": int64(math.MaxInt64)},
		"exp-max": {"active": true, "client_id": "forever", "aud": testAudience, "exp": int64(math.MaxInt64)},
	}
	s := &asIntrospection{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		time.Sleep(s.delay)
		w.Header().Set("Content-Type", "application/json")
		id, secret, ok := r.BasicAuth()
		// RFC 6749 §2.3.1: the credentials arrive form-encoded.
		if !ok || id != rsID || secret != "s3cret%3Awith%2Fodd%26chars" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		if r.Method != http.MethodPost || r.FormValue("token_type_hint") != "access_token" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ans, ok := answers[r.PostFormValue("token")]
		if !ok {
			ans = map[string]any{"active": false}
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	t.Cleanup(s.Close)
	return s
}

func newIntrospectionMCP(t *testing.T, endpoint, secret string, opts *auth.IntrospectionOptions) *mcptest.Endpoint {
	t.Helper()
	in, err := auth.NewIntrospection(endpoint, rsID, secret, testAudience, opts)
	if err != nil {
		t.Fatal(err)
	}
	return serveMCP(t, in)
}

// TestIntrospection: opaque tokens checked at an RFC 7662 endpoint:
// active, inactive and refused answers, and an endpoint that is down or
// refuses the resource server's credentials (503, not 401).
func TestIntrospection(t *testing.T) {
	t.Parallel()
	as := newIntrospectionServer(t)
	hs := newIntrospectionMCP(t, as.URL, rsSecret, &auth.IntrospectionOptions{Issuer: testIssuer})

	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "active")), "client opaque-client")
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("admin", `{}`), "admin")), "user-7")
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "exp-max")), "client forever")
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("admin", `{}`), "active")), 403, -32600, "1",
		`Bearer error="insufficient_scope", `+md+`, scope="tools:admin"`)
	for token, desc := range map[string]string{
		"revoked-or-unknown": "the token is not active",
		"other":              "the token was issued for another resource",
		"no-exp":             "the token has no expiry",
		"old":                "the token has expired",
		"foreign-iss":        "the token is from another issuer",
		"dpop":               "the token is not a bearer token",
		"nbf-max":            "the token is not valid yet",
	} {
		expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token)), 401, -32600, "1", invalidToken(desc))
	}

	// Answers are cached: the same tokens again cost no call.
	before := as.calls.Load()
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "active")), "client opaque-client")
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "revoked-or-unknown")), 401, -32600, "1", invalidToken("the token is not active"))
	if n := as.calls.Load() - before; n != 0 {
		t.Errorf("%d calls for cached tokens", n)
	}

	// Wrong credentials: the endpoint's 401 is the operator's problem.
	wrong := newIntrospectionMCP(t, as.URL, "wrong", nil)
	rep := wrong.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "active"))
	expectRefused(t, rep, 503, -32603, "1", "")

	// The endpoint is down.
	as.Close()
	down := newIntrospectionMCP(t, as.URL, rsSecret, nil)
	rep = down.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "active").WithID(8))
	expectRefused(t, rep, 503, -32603, "8", "")
	if got := rep.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q", got)
	}
}

// TestIntrospectionShared: concurrent requests with one token share one
// call; a slow endpoint is cut off at Timeout (503).
func TestIntrospectionShared(t *testing.T) {
	t.Parallel()
	as := newIntrospectionServer(t)
	as.delay = 200 * time.Millisecond
	hs := newIntrospectionMCP(t, as.URL, rsSecret, nil)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "active")), "client opaque-client")
		})
	}
	wg.Wait()
	if n := as.calls.Load(); n != 1 {
		t.Errorf("%d calls for 10 concurrent requests with one token, want 1", n)
	}
	stuck := newIntrospectionServer(t)
	stuck.delay = 1500 * time.Millisecond
	slow := newIntrospectionMCP(t, stuck.URL, rsSecret, &auth.IntrospectionOptions{Timeout: 50 * time.Millisecond, CacheTTL: -1})
	began := time.Now()
	expectRefused(t, slow.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "admin")), 503, -32603, "1", "")
	if d := time.Since(began); d > time.Second {
		t.Errorf("a slow endpoint held the request %v", d)
	}
}

// TestIntrospectionConstruction: the endpoint must be https or loopback
// http; the credentials and the audience are required.
func TestIntrospectionConstruction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ endpoint, id, secret, aud string }{
		{"http://as.example.test/introspect", rsID, rsSecret, testAudience},
		{"https://as.example.test/introspect", "", rsSecret, testAudience},
		{"https://as.example.test/introspect", rsID, "", testAudience},
		{"https://as.example.test/introspect", rsID, rsSecret, ""},
	} {
		if _, err := auth.NewIntrospection(tc.endpoint, tc.id, tc.secret, tc.aud, nil); err == nil {
			t.Errorf("NewIntrospection(%+v) accepted", tc)
		}
	}
	if _, err := auth.NewIntrospection("https://as.example.test/introspect", rsID, rsSecret, testAudience, nil); err != nil {
		t.Error(err)
	}
}
