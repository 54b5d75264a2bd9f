package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
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
		// The form read first: the server notices a client gone only
		// once the body is read.
		_ = r.ParseForm()
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
		}
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
	// Without tools:admin, admin is answered as an unknown tool (docs/design.md §5).
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("admin", `{}`), "active")), 200, -32602, "1", "")
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
	stuck.delay = time.Minute // or until the request is given up
	slow := newIntrospectionMCP(t, stuck.URL, rsSecret, &auth.IntrospectionOptions{Timeout: 50 * time.Millisecond, CacheTTL: -1})
	began := time.Now()
	expectRefused(t, slow.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "admin")), 503, -32603, "1", "")
	if d := time.Since(began); d > 20*time.Second {
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

// TestIntrospectionNumericDates: exp and nbf are RFC 7519 NumericDates,
// which may have a fraction: a finite non-negative number is accepted
// (its whole seconds). One that is negative, not a number, or past the
// int64 seconds is a refusal of the token (401 invalid_token, cached like
// any refusal), not an endpoint that could not answer (503, asked again).
func TestIntrospectionNumericDates(t *testing.T) {
	t.Parallel()
	now := time.Now().Unix()
	future, past := strconv.FormatInt(now+3600, 10), strconv.FormatInt(now-3600, 10)
	answer := func(members string) string {
		return `{"active":true,"client_id":"c","aud":"` + testAudience + `",` + members + `}`
	}
	answers := map[string]string{
		"exp-fraction":      answer(`"exp":` + future + `.75`),
		"exp-exponent":      answer(`"exp":1e10`),
		"exp-spaced":        answer(`"exp" : ` + future + `.5 `),
		"nbf-fraction":      answer(`"exp":` + future + `,"nbf":` + past + `.25`),
		"nbf-zero":          answer(`"exp":` + future + `,"nbf":-0.0`),
		"exp-fraction-past": answer(`"exp":` + past + `.5`),
		"exp-zero":          answer(`"exp":-0`),
		"nbf-fraction-late": answer(`"exp":` + future + `,"nbf":` + future + `.5`),
		"exp-negative":      answer(`"exp":-1`),
		"exp-neg-fraction":  answer(`"exp":-0.5`),
		"exp-huge":          answer(`"exp":1e400`),
		"exp-past-int64":    answer(`"exp":9223372036854775808`),
		"exp-1e19":          answer(`"exp":1e19`),
		"exp-string":        answer(`"exp":"` + future + `"`),
		"exp-nan":           answer(`"exp":"NaN"`),
		"exp-bool":          answer(`"exp":true`),
		"exp-array":         answer(`"exp":[` + future + `]`),
		"nbf-negative":      answer(`"exp":` + future + `,"nbf":-5`),
		"nbf-huge":          answer(`"exp":` + future + `,"nbf":1e400`),
		"nbf-past-int64":    answer(`"exp":` + future + `,"nbf":9223372036854775808`),
		"nbf-string":        answer(`"exp":` + future + `,"nbf":"` + past + `"`),
		"inactive-bad-exp":  `{"active":false,"exp":-1}`,
	}
	var calls atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answers[r.PostFormValue("token")]))
	}))
	t.Cleanup(as.Close)
	in, err := auth.NewIntrospection(as.URL, rsID, rsSecret, testAudience, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	for token, exp := range map[string]int64{
		"exp-fraction": now + 3600,
		"exp-exponent": 1e10,
		"exp-spaced":   now + 3600,
		"nbf-fraction": now + 3600,
		"nbf-zero":     now + 3600,
	} {
		p, err := in.Introspect(ctx, token)
		if err != nil {
			t.Errorf("%s: %v", token, err)
			continue
		}
		if p.Expiry.Unix() != exp {
			t.Errorf("%s: expiry %d, want %d", token, p.Expiry.Unix(), exp)
		}
	}

	badExp := "the token's expiry (exp) is not a valid time"
	badNbf := "the token's start (nbf) is not a valid time"
	for token, desc := range map[string]string{
		"exp-fraction-past": "the token has expired",
		"exp-zero":          "the token has expired",
		"nbf-fraction-late": "the token is not valid yet",
		"exp-negative":      badExp,
		"exp-neg-fraction":  badExp,
		"exp-huge":          badExp,
		"exp-past-int64":    badExp,
		"exp-1e19":          badExp,
		"exp-string":        badExp,
		"exp-nan":           badExp,
		"exp-bool":          badExp,
		"exp-array":         badExp,
		"nbf-negative":      badNbf,
		"nbf-huge":          badNbf,
		"nbf-past-int64":    badNbf,
		"nbf-string":        badNbf,
		"inactive-bad-exp":  "the token is not active",
	} {
		for try := range 2 { // the second from the cache of refusals
			before := calls.Load()
			_, err := in.Introspect(ctx, token)
			var ae *wymcp.AuthError
			if !errors.As(err, &ae) || ae.Code != wymcp.AuthInvalidToken || ae.Description != desc {
				t.Errorf("%s (try %d): %v, want invalid_token %q", token, try, err, desc)
			}
			if n := calls.Load() - before; try == 1 && n != 0 {
				t.Errorf("%s: the refusal was not cached (%d calls)", token, n)
			}
		}
	}

	// Through the server: 401 with the description, not 503.
	hs := serveMCP(t, in)
	expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "exp-huge")), 401, -32600, "1", invalidToken(badExp))
	expectCalled(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "exp-fraction")), "client c")
}
