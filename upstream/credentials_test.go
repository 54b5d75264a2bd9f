package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
)

// writeHeadersFile writes content to a fresh file and returns its path.
func writeHeadersFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStaticHeaders(t *testing.T) {
	path := writeHeadersFile(t, "# the gateway's key for the upstream\r\n"+
		"\n"+
		"   # an indented comment\n"+
		"Authorization: Bearer s3cret-token\r\n"+
		"x-api-key:\tk-123 with spaces \t\n"+
		"\t \n"+
		"X-Tenant:acme")
	creds, err := StaticHeaders(path)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/json"}, "Mcp-Method": {"tools/call"}}
	if err := creds.apply(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"Content-Type":  {"application/json"},
		"Mcp-Method":    {"tools/call"},
		"Authorization": {"Bearer s3cret-token"},
		"X-Api-Key":     {"k-123 with spaces"},
		"X-Tenant":      {"acme"},
	}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	// A request that changes its header does not change the next one's.
	h["Authorization"][0] = "changed"
	if creds.refused(context.Background(), h) {
		t.Error("static headers retried after a 401")
	}
	h2 := http.Header{"Authorization": {"Basic old"}}
	if err := creds.apply(context.Background(), h2); err != nil {
		t.Fatal(err)
	}
	if got := h2["Authorization"]; len(got) != 1 || got[0] != "Bearer s3cret-token" {
		t.Fatalf("second request's Authorization %q", got)
	}
}

func TestStaticHeadersRefusals(t *testing.T) {
	const secret = "s3cret-VALUE"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"no colon", "X-Ok: 1\n" + secret + "\n", `line 2: not a "Name: value" line`},
		{"space in name", "X Key: " + secret, "line 1: invalid header name"},
		{"space before colon", "X-Key : " + secret, "line 1: invalid header name"},
		{"empty name", ": " + secret, "line 1: invalid header name"},
		{"indented name", "  X-Key: " + secret, "line 1: invalid header name"},
		{"bracket in name", "X(Key): " + secret, "line 1: invalid header name"},
		{"control character", "# c\nX-Key: " + secret + "\x01", "line 2: X-Key has a value with control characters"},
		{"DEL", "X-Key: " + secret + "\x7f", "line 1: X-Key has a value with control characters"},
		{"empty value", "X-Key:  \t", "line 1: X-Key has an empty value"},
		{"repeated", "X-Key: " + secret + "\n\nx-key: " + secret, "line 3: X-Key repeats line 1"},
		{"no headers", "# nothing\n\n", "no headers"},
		{"Host", "host: " + secret, "line 1: Host is set by the gateway, not by credentials"},
		{"Content-Length", "CONTENT-LENGTH: 1", "line 1: Content-Length is set by the gateway, not by credentials"},
		{"Content-Type", "content-type: " + secret, "line 1: Content-Type is set by the gateway, not by credentials"},
		{"Accept", "Accept: " + secret, "line 1: Accept is set by the gateway, not by credentials"},
		{"Mcp-Method", "mcp-method: " + secret, "line 1: Mcp-Method is set by the gateway, not by credentials"},
		{"Mcp-Name", "MCP-NAME: " + secret, "line 1: Mcp-Name is set by the gateway, not by credentials"},
		{"MCP-Protocol-Version", "MCP-Protocol-Version: " + secret, "line 1: Mcp-Protocol-Version is set by the gateway, not by credentials"},
		{"Mcp-Session-Id", "mcp-session-ID: " + secret, "line 1: Mcp-Session-Id is set by the gateway, not by credentials"},
		{"Traceparent", "traceparent: " + secret, "line 1: Traceparent is set by the gateway, not by credentials"},
		{"Tracestate", "TraceState: " + secret, "line 1: Tracestate is set by the gateway, not by credentials"},
		{"Mcp-Param-", "Mcp-Param-Region: " + secret, "line 1: Mcp-Param-Region is set by the gateway, not by credentials"},
		{"Transfer-Encoding", "transfer-encoding: chunked", "line 1: Transfer-Encoding is set by the gateway, not by credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeHeadersFile(t, tc.content)
			creds, err := StaticHeaders(path)
			if err == nil {
				t.Fatalf("accepted: %v", creds)
			}
			want := "upstream: static headers: " + path + ": " + tc.want
			if err.Error() != want {
				t.Fatalf("error %q\nwant  %q", err, want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error holds the value: %q", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, err := StaticHeaders(filepath.Join(t.TempDir(), "none"))
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		path := writeHeadersFile(t, "X-Key: "+strings.Repeat("a", maxSecretFile))
		_, err := StaticHeaders(path)
		if err == nil || err.Error() != "upstream: static headers: "+path+" is larger than 64 KiB" {
			t.Fatalf("error %v", err)
		}
	})
}

// credTokenServer is a token endpoint on 127.0.0.1 that records what it is
// asked and answers with answer.
type credTokenServer struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	forms    []url.Values
	auths    [][2]string
	headers  []http.Header
	answer   func(n int64, form url.Values) (status int, body string)
}

func newCredTokenServer(t *testing.T, answer func(n int64, form url.Values) (int, string)) *credTokenServer {
	t.Helper()
	ts := &credTokenServer{answer: answer}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := ts.requests.Add(1)
		if r.Method != http.MethodPost {
			t.Errorf("method %s", r.Method)
		}
		if err := r.ParseForm(); err != nil {
			t.Errorf("form: %v", err)
		}
		user, pass, _ := r.BasicAuth()
		// RFC 6749 §2.3.1: both halves are form-encoded before Basic.
		user, _ = url.QueryUnescape(user)
		pass, _ = url.QueryUnescape(pass)
		ts.mu.Lock()
		ts.forms = append(ts.forms, r.PostForm)
		ts.auths = append(ts.auths, [2]string{user, pass})
		ts.headers = append(ts.headers, r.Header.Clone())
		ts.mu.Unlock()
		status, body := ts.answer(n, r.PostForm)
		w.Header().Set("Content-Type", "application/json")
		if status/100 == 3 {
			// Where a client that follows redirects would take the form.
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("token server at %s, not on 127.0.0.1", ts.URL)
	}
	t.Cleanup(ts.Close)
	return ts
}

func (ts *credTokenServer) form(i int) url.Values {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.forms[i]
}

func (ts *credTokenServer) auth(i int) [2]string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.auths[i]
}

// numberedTokens answers "tok-N" for the Nth request, valid for expiresIn seconds.
func numberedTokens(expiresIn int) func(int64, url.Values) (int, string) {
	return func(n int64, _ url.Values) (int, string) {
		return http.StatusOK, fmt.Sprintf(`{"access_token":"tok-%d","token_type":"bearer","expires_in":%d}`, n, expiresIn)
	}
}

const (
	credTestClientID     = "gw:client/é"
	credTestClientSecret = "s3cr+t/= &%"
)

func credOAuthConfig(ts *credTokenServer) OAuth {
	return OAuth{
		TokenURL:     ts.URL + "/token",
		ClientID:     credTestClientID,
		ClientSecret: credTestClientSecret,
		Scopes:       []string{"tools:echo", "tools:add"},
		Resource:     "http://127.0.0.1:41002/mcp",
	}
}

// applyBearer applies creds and returns the Authorization header it set.
func applyBearer(t *testing.T, ctx context.Context, creds Credentials) string {
	t.Helper()
	h := http.Header{}
	if err := creds.apply(ctx, h); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if len(h) != 1 || len(h["Authorization"]) != 1 {
		t.Fatalf("headers set: %v", h)
	}
	return h["Authorization"][0]
}

// credClock is a clock the test moves.
type credClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *credClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *credClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func credCache(creds Credentials) *tokenCache {
	switch c := creds.(type) {
	case *clientCredentials:
		return c.cache
	case *tokenExchange:
		return c.cache
	}
	panic("no cache")
}

// withCredClock gives creds' cache a fake clock; it must be called before the
// first apply.
func withCredClock(creds Credentials) *credClock {
	clk := &credClock{t: time.Unix(1_800_000_000, 0)}
	credCache(creds).now = clk.now
	return clk
}

// settleFetch waits until no fetch is in progress for key.
func settleFetch(t *testing.T, creds Credentials, key string) {
	t.Helper()
	c := credCache(creds)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c.mu.Lock()
		s := c.slots[key]
		busy := s != nil && s.flight != nil
		c.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a token fetch is still in progress after 30 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// cachedToken returns key's cached token.
func cachedToken(creds Credentials, key string) (token, bool) {
	c := credCache(creds)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.slots[key]
	if s == nil {
		return token{}, false
	}
	return s.tok, true
}

func TestClientCredentialsCaching(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(3600))
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if got := applyBearer(t, context.Background(), creds); got != "Bearer tok-1" {
			t.Fatalf("apply %d: %q", i, got)
		}
	}
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("%d token requests for 20 applies, want 1", n)
	}
	wantForm := url.Values{
		"grant_type": {"client_credentials"},
		"scope":      {"tools:echo tools:add"},
		"resource":   {"http://127.0.0.1:41002/mcp"},
	}
	if got := ts.form(0); !reflect.DeepEqual(got, wantForm) {
		t.Errorf("form %v, want %v", got, wantForm)
	}
	if got := ts.auth(0); got != [2]string{credTestClientID, credTestClientSecret} {
		t.Errorf("Basic credentials %q", got)
	}
	ts.mu.Lock()
	h := ts.headers[0]
	ts.mu.Unlock()
	if h.Get("Content-Type") != "application/x-www-form-urlencoded" || h.Get("Accept") != "application/json" {
		t.Errorf("request headers %v", h)
	}
}

func TestClientCredentialsNoScopeNoResource(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(3600))
	creds, err := ClientCredentials(OAuth{TokenURL: ts.URL, ClientID: "id", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if got := applyBearer(t, context.Background(), creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	if got, want := ts.form(0), (url.Values{"grant_type": {"client_credentials"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("form %v, want %v", got, want)
	}
}

func TestClientCredentialsRefreshBeforeExpiry(t *testing.T) {
	failing := atomic.Bool{}
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		if failing.Load() {
			return http.StatusInternalServerError, "<html>down</html>"
		}
		return numberedTokens(60)(n, f)
	})
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	clk := withCredClock(creds)
	ctx := context.Background()
	t0 := clk.now()

	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	// 60 s of lifetime, refreshed with max(10 s, 12 s) = 12 s left.
	tok, _ := cachedToken(creds, "")
	if !tok.expires.Equal(t0.Add(60*time.Second)) || !tok.refreshAt.Equal(t0.Add(48*time.Second)) {
		t.Fatalf("expires %v, refresh at %v", tok.expires.Sub(t0), tok.refreshAt.Sub(t0))
	}
	clk.advance(47 * time.Second)
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("%d requests before the refresh is due", n)
	}
	// Due: this apply still gets the valid token and starts the refresh.
	clk.advance(2 * time.Second)
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests once the refresh was due, want 2", n)
	}
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("after the refresh: %q", got)
	}
	tok, _ = cachedToken(creds, "")
	t1 := t0.Add(49 * time.Second)
	if !tok.expires.Equal(t1.Add(60 * time.Second)) {
		t.Fatalf("new token expires at %v", tok.expires.Sub(t0))
	}

	// The endpoint fails: the old token is used while it is valid, and the
	// refresh is tried again a second later, not at every call.
	failing.Store(true)
	clk.advance(49 * time.Second) // 11 s of tok-2 left
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if n := ts.requests.Load(); n != 3 {
		t.Fatalf("%d requests after a failed refresh, want 3", n)
	}
	clk.advance(retryDelay)
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if n := ts.requests.Load(); n != 4 {
		t.Fatalf("%d requests a retry delay later, want 4", n)
	}
	// Expired, and the endpoint still fails: the call fails.
	clk.advance(10 * time.Second)
	err = creds.apply(ctx, http.Header{})
	if err == nil || err.Error() != "upstream: client credentials: token endpoint: HTTP 500" {
		t.Fatalf("error %v", err)
	}
	// Back, but the third failure in a row set a backoff of 4 s: until it
	// ends, calls get that failure at once, without a request.
	failing.Store(false)
	err = creds.apply(ctx, http.Header{})
	if err == nil || err.Error() != "upstream: client credentials: token endpoint: HTTP 500" || ts.requests.Load() != 5 {
		t.Fatalf("within the backoff: error %v, %d requests", err, ts.requests.Load())
	}
	clk.advance(backoffDelay(3))
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-6" {
		t.Fatalf("%q", got)
	}
}

// TestClientCredentialsShortLifetime uses the real clock: a token of one
// second is due for refresh at once (less than 10 s left), and is replaced
// when it expires.
func TestClientCredentialsShortLifetime(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(1))
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	// Still valid, already due: used, and a refresh starts.
	first, _ := cachedToken(creds, "")
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" && time.Now().Before(first.expires) {
		t.Fatalf("%q", got)
	}
	settleFetch(t, creds, "")
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" && got != "Bearer tok-3" {
		t.Fatalf("%q", got)
	}
	time.Sleep(1100 * time.Millisecond)
	settleFetch(t, creds, "")
	before := ts.requests.Load()
	// Every token seen so far has expired: the call waits for a new one.
	got := applyBearer(t, ctx, creds)
	if want := fmt.Sprintf("Bearer tok-%d", before+1); got != want {
		t.Fatalf("after expiry: %q, want %q", got, want)
	}
}

func TestClientCredentialsSingleFlight(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		arrived <- struct{}{}
		<-release
		return numberedTokens(3600)(n, f)
	})
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	const callers = 50
	var started, done sync.WaitGroup
	got := make([]string, callers)
	errs := make([]error, callers)
	for i := 0; i < callers; i++ {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			h := http.Header{}
			started.Done()
			errs[i] = creds.apply(context.Background(), h)
			got[i] = h.Get("Authorization")
		}()
	}
	started.Wait()
	<-arrived
	// Let the callers reach the flight the first one started.
	time.Sleep(100 * time.Millisecond)
	close(release)
	done.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != "Bearer tok-1" {
			t.Fatalf("caller %d: %q %v", i, got[i], errs[i])
		}
	}
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("%d token requests for %d concurrent applies, want 1", n, callers)
	}
}

// A caller that gives up does not cancel the fetch the others share.
func TestClientCredentialsWaiterCancelled(t *testing.T) {
	release := make(chan struct{})
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		<-release
		return numberedTokens(3600)(n, f)
	})
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := creds.apply(ctx, http.Header{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	close(release)
	settleFetch(t, creds, "")
	if got := applyBearer(t, context.Background(), creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestClientCredentialsRefused(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(3600))
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	if !creds.refused(ctx, bearerHeader("tok-1")) {
		t.Fatal("no retry after the first 401")
	}
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("after refused: %q", got)
	}
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-2" {
		t.Fatalf("%q", got)
	}
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	const subjectToken = "caller-t0ken-SECRET"
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"400 with a code", 400, `{"error":"invalid_scope","error_description":"scope ` + credTestClientSecret + `"}`, "HTTP 400: invalid_scope"},
		{"401 invalid_client", 401, `{"error":"invalid_client"}`, "HTTP 401: invalid_client"},
		{"400 invalid_grant", 400, `{"error":"invalid_grant"}`, "HTTP 400: invalid_grant"},
		{"500 not JSON", 500, `<html>` + subjectToken + `</html>`, "HTTP 500"},
		{"error code outside the charset", 400, `{"error":"bad\"code ` + credTestClientSecret + `"}`, "HTTP 400"},
		{"302", 302, ``, "HTTP 302"},
		{"not JSON", 200, `access_token=x`, "HTTP 200 but the answer is not a token response"},
		{"duplicate member", 200, `{"access_token":"a","access_token":"b","token_type":"Bearer"}`, "HTTP 200 but the answer is not a token response"},
		{"no token", 200, `{"token_type":"Bearer","expires_in":60}`, "HTTP 200 but no access_token"},
		{"not Bearer", 200, `{"access_token":"a","token_type":"DPoP"}`, `token_type "DPoP", not Bearer`},
		{"no token_type", 200, `{"access_token":"a"}`, `token_type "", not Bearer`},
		{"token with a newline", 200, `{"access_token":"a\nb","token_type":"Bearer"}`, "the access_token cannot be sent in a header"},
		{"expires_in zero", 200, `{"access_token":"a","token_type":"Bearer","expires_in":0}`, "expires_in is not positive"},
		{"expires_in garbage", 200, `{"access_token":"a","token_type":"Bearer","expires_in":"soon"}`, "HTTP 200 but the answer is not a token response"},
		{"issued a refresh token", 200, `{"access_token":"a","token_type":"Bearer","issued_token_type":"urn:ietf:params:oauth:token-type:refresh_token"}`, `issued_token_type "urn:ietf:params:oauth:token-type…" is not an access token`},
		{"too large", 200, `{"access_token":"` + strings.Repeat("a", maxTokenResponse) + `","token_type":"Bearer"}`, "HTTP 200: answer larger than 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newCredTokenServer(t, func(int64, url.Values) (int, string) { return tc.status, tc.body })
			creds, err := TokenExchange(credOAuthConfig(ts))
			if err != nil {
				t.Fatal(err)
			}
			ctx := caller.WithIdentity(context.Background(), &caller.Identity{Subject: "sub:alice", Token: subjectToken})
			err = creds.apply(ctx, http.Header{})
			want := "upstream: token exchange: token endpoint: " + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant  %s", err, want)
			}
			if strings.Contains(err.Error(), credTestClientSecret) || strings.Contains(err.Error(), subjectToken) ||
				strings.Contains(err.Error(), url.QueryEscape(credTestClientSecret)) {
				t.Fatalf("the error holds a secret: %q", err)
			}
			if n := ts.requests.Load(); n != 1 {
				t.Fatalf("%d requests", n)
			}
			// A failed exchange caches no token, only its backoff: the
			// next call gets the same failure without a request.
			if tok, _ := cachedToken(creds, exchangeKey(caller.IdentityFrom(ctx))); tok.value != "" {
				t.Fatalf("a token cached after a failure")
			}
			err2 := creds.apply(ctx, http.Header{})
			if err2 == nil || err2.Error() != want || ts.requests.Load() != 1 {
				t.Fatalf("second apply: %v, %d requests", err2, ts.requests.Load())
			}
		})
	}
}

func TestTokenResponseLifetime(t *testing.T) {
	for _, tc := range []struct {
		body string
		want time.Duration
	}{
		{`{"access_token":"a","token_type":"Bearer"}`, 5 * time.Minute},
		{`{"access_token":"a","token_type":"BEARER","expires_in":"90"}`, 90 * time.Second},
		{`{"access_token":"a","token_type":"Bearer","expires_in":1.5}`, 1500 * time.Millisecond},
		{`{"access_token":"a","token_type":"Bearer","expires_in":1e300}`, maxTokenLifetime},
	} {
		ts := newCredTokenServer(t, func(int64, url.Values) (int, string) { return 200, tc.body })
		creds, err := ClientCredentials(credOAuthConfig(ts))
		if err != nil {
			t.Fatal(err)
		}
		clk := withCredClock(creds)
		if got := applyBearer(t, context.Background(), creds); got != "Bearer a" {
			t.Fatalf("%s: %q", tc.body, got)
		}
		tok, _ := cachedToken(creds, "")
		if got := tok.expires.Sub(clk.now()); got != tc.want {
			t.Errorf("%s: lifetime %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestTokenEndpointUnreachable(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(60))
	cfg := credOAuthConfig(ts)
	ts.Close()
	creds, err := ClientCredentials(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = creds.apply(context.Background(), http.Header{})
	prefix := "upstream: client credentials: token endpoint: Post \"" + cfg.TokenURL + "\": "
	if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("error %v", err)
	}
}

func TestOAuthConfigRefusals(t *testing.T) {
	good := OAuth{TokenURL: "https://as.example/token", ClientID: "id", ClientSecret: "secret"}
	for _, tc := range []struct {
		name   string
		change func(*OAuth)
		want   string
	}{
		{"no URL", func(o *OAuth) { o.TokenURL = "" }, "TokenURL: must be an http or https URL"},
		{"ftp", func(o *OAuth) { o.TokenURL = "ftp://as.example/token" }, "TokenURL: must be an http or https URL"},
		{"relative", func(o *OAuth) { o.TokenURL = "/token" }, "TokenURL: must be an http or https URL"},
		{"userinfo", func(o *OAuth) { o.TokenURL = "https://u:p@as.example/token" }, "TokenURL: must not hold credentials; use ClientID and ClientSecret"},
		{"fragment", func(o *OAuth) { o.TokenURL = "https://as.example/token#x" }, "TokenURL: must not have a fragment"},
		{"no client", func(o *OAuth) { o.ClientID = "" }, "ClientID: is required"},
		{"no secret", func(o *OAuth) { o.ClientSecret = "" }, "ClientSecret: is required"},
		{"bad scope", func(o *OAuth) { o.Scopes = []string{"a", `b"c`} }, `Scopes[1]: "b\"c" is not an RFC 6749 scope token`},
		{"empty scope", func(o *OAuth) { o.Scopes = []string{""} }, `Scopes[0]: "" is not an RFC 6749 scope token`},
		{"relative resource", func(o *OAuth) { o.Resource = "/mcp" }, "Resource: must be an absolute URI without a fragment (RFC 8707)"},
		{"resource fragment", func(o *OAuth) { o.Resource = "https://up.example/mcp#a" }, "Resource: must be an absolute URI without a fragment (RFC 8707)"},
	} {
		cfg := good
		tc.change(&cfg)
		for _, grant := range []struct {
			what string
			make func(OAuth) (Credentials, error)
		}{{"client credentials", ClientCredentials}, {"token exchange", TokenExchange}} {
			_, err := grant.make(cfg)
			if want := "upstream: " + grant.what + ": " + tc.want; err == nil || err.Error() != want {
				t.Errorf("%s, %s: error %v, want %s", tc.name, grant.what, err, want)
			}
		}
	}
	cfg := good
	cfg.Audience = "upstream"
	if _, err := ClientCredentials(cfg); err == nil || err.Error() != "upstream: client credentials: Audience: is a token-exchange parameter; use Resource" {
		t.Errorf("Audience with client credentials: %v", err)
	}
	if _, err := TokenExchange(cfg); err != nil {
		t.Errorf("Audience with token exchange: %v", err)
	}
}

func exchangeAnswer(n int64, f url.Values) (int, string) {
	return http.StatusOK, fmt.Sprintf(`{"access_token":"x-%s-%d","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":600}`,
		f.Get("subject_token"), n)
}

func credCallerCtx(subject, token string) context.Context {
	return caller.WithIdentity(context.Background(), credCaller(subject, token))
}

func credCaller(subject, token string) *caller.Identity {
	return &caller.Identity{Subject: subject, Scopes: []string{"tools:echo"}, Token: token}
}

// bearerHeader is the header of a request that sent tok.
func bearerHeader(tok string) http.Header {
	return http.Header{"Authorization": {"Bearer " + tok}}
}

func TestTokenExchangeForm(t *testing.T) {
	ts := newCredTokenServer(t, exchangeAnswer)
	cfg := credOAuthConfig(ts)
	cfg.Audience = "upstream-api"
	creds, err := TokenExchange(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := applyBearer(t, credCallerCtx("sub:alice", "alice.jwt"), creds); got != "Bearer x-alice.jwt-1" {
		t.Fatalf("%q", got)
	}
	want := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {"alice.jwt"},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"resource":             {"http://127.0.0.1:41002/mcp"},
		"audience":             {"upstream-api"},
		"scope":                {"tools:echo tools:add"},
	}
	if got := ts.form(0); !reflect.DeepEqual(got, want) {
		t.Errorf("form\n%v\nwant\n%v", got, want)
	}
	if got := ts.auth(0); got != [2]string{credTestClientID, credTestClientSecret} {
		t.Errorf("Basic credentials %q", got)
	}
	ts.mu.Lock()
	h := ts.headers[0]
	ts.mu.Unlock()
	user, pass, ok := (&http.Request{Header: h}).BasicAuth()
	if !ok || user != "gw%3Aclient%2F%C3%A9" || pass != "s3cr%2Bt%2F%3D+%26%25" {
		t.Errorf("Basic halves not form-encoded: %q %q", user, pass)
	}
	if h.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", h.Get("Content-Type"))
	}

	// Without resource, audience and scope, only the four RFC 8693 ones.
	ts2 := newCredTokenServer(t, exchangeAnswer)
	creds, err = TokenExchange(OAuth{TokenURL: ts2.URL, ClientID: "id", ClientSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if got := applyBearer(t, credCallerCtx("sub:bob", "bob.jwt"), creds); got != "Bearer x-bob.jwt-1" {
		t.Fatalf("%q", got)
	}
	want = url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {"bob.jwt"},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
	}
	if got := ts2.form(0); !reflect.DeepEqual(got, want) {
		t.Errorf("form\n%v\nwant\n%v", got, want)
	}
}

func TestTokenExchangePerSubject(t *testing.T) {
	ts := newCredTokenServer(t, exchangeAnswer)
	creds, err := TokenExchange(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := credCallerCtx("sub:alice", "alice.1"), credCallerCtx("sub:bob", "bob.1")
	for i := 0; i < 3; i++ {
		if got := applyBearer(t, alice, creds); got != "Bearer x-alice.1-1" {
			t.Fatalf("alice %d: %q", i, got)
		}
	}
	for i := 0; i < 2; i++ {
		if got := applyBearer(t, bob, creds); got != "Bearer x-bob.1-2" {
			t.Fatalf("bob %d: %q", i, got)
		}
	}
	// The same subject with another token of its own: an exchange of that
	// token, never the token exchanged from another (issue 38).
	if got := applyBearer(t, credCallerCtx("sub:alice", "alice.2"), creds); got != "Bearer x-alice.2-3" {
		t.Fatalf("alice, new caller token: %q", got)
	}
	if n := ts.requests.Load(); n != 3 {
		t.Fatalf("%d requests for three caller tokens, want 3", n)
	}
	// Refused for bob: bob's token only is dropped.
	if !creds.refused(bob, bearerHeader("x-bob.1-2")) {
		t.Fatal("no retry after bob's first 401")
	}
	if creds.refused(context.Background(), bearerHeader("x-alice.1-1")) { // no caller: nothing was sent
		t.Fatal("retry for a call without a caller")
	}
	if got := applyBearer(t, bob, creds); got != "Bearer x-bob.1-4" {
		t.Fatalf("bob after refused: %q", got)
	}
	if got := applyBearer(t, alice, creds); got != "Bearer x-alice.1-1" {
		t.Fatalf("alice after bob's refusal: %q", got)
	}
	if n := ts.requests.Load(); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
}

func TestTokenExchangeSingleFlightPerSubject(t *testing.T) {
	release := make(chan struct{})
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		<-release
		return exchangeAnswer(n, f)
	})
	creds, err := TokenExchange(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	var done sync.WaitGroup
	results := make(chan string, 40)
	for i := 0; i < 40; i++ {
		subject := []string{"sub:alice", "sub:bob"}[i%2]
		done.Add(1)
		go func() {
			defer done.Done()
			h := http.Header{}
			if err := creds.apply(credCallerCtx(subject, subject+".tok"), h); err != nil {
				t.Error(err)
			}
			results <- subject + " " + h.Get("Authorization")
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for ts.requests.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	done.Wait()
	close(results)
	seen := map[string]int{}
	for r := range results {
		seen[r]++
	}
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d requests for 40 applies by 2 subjects, want 2", n)
	}
	var tokens []string
	for r, n := range seen {
		if n != 20 {
			t.Errorf("%q %d times", r, n)
		}
		tokens = append(tokens, r)
	}
	if len(tokens) != 2 {
		t.Fatalf("answers %v", seen)
	}
	for _, r := range tokens {
		subject, auth, _ := strings.Cut(r, " ")
		if !strings.HasPrefix(auth, "Bearer x-"+subject+".tok-") {
			t.Errorf("%s got %s", subject, auth)
		}
	}
}

func TestTokenExchangeNoCaller(t *testing.T) {
	ts := newCredTokenServer(t, exchangeAnswer)
	creds, err := TokenExchange(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"auth off", context.Background(), errNoCaller},
		{"nil identity", caller.WithIdentity(context.Background(), nil), errNoCaller},
		{"no subject", credCallerCtx("", "tok"), errNoCaller},
		{"no token", credCallerCtx("client:x", ""), errNoCallerToken},
	} {
		h := http.Header{}
		if err := creds.apply(tc.ctx, h); err != tc.want {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		if len(h) != 0 {
			t.Errorf("%s: headers %v", tc.name, h)
		}
	}
	if errNoCaller.Error() != "upstream: token exchange: the call has no authenticated caller whose token could be exchanged (the server runs without auth)" ||
		errNoCallerToken.Error() != "upstream: token exchange: the caller presented no bearer token to exchange" {
		t.Errorf("messages %q, %q", errNoCaller, errNoCallerToken)
	}
	if n := ts.requests.Load(); n != 0 {
		t.Fatalf("%d token requests without a caller token", n)
	}
}

func TestTokenExchangeEviction(t *testing.T) {
	// expires_in per subject token: "s1.100" lives 100 s.
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		st := f.Get("subject_token")
		_, life, _ := strings.Cut(st, ".")
		return http.StatusOK, fmt.Sprintf(`{"access_token":"x-%s-%d","token_type":"Bearer","expires_in":%s}`, st, n, life)
	})
	creds, err := TokenExchange(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	if got := credCache(creds).max; got != 10000 {
		t.Fatalf("bound %d, want 10000", got)
	}
	credCache(creds).max = 3
	clk := withCredClock(creds)
	apply := func(subject, life string) string {
		t.Helper()
		return applyBearer(t, credCallerCtx(subject, subject+"."+life), creds)
	}
	key := func(subject, life string) string { return exchangeKey(credCaller(subject, subject+"."+life)) }
	size := func() int {
		c := credCache(creds)
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.slots)
	}
	apply("s1", "100")
	apply("s2", "50")
	apply("s3", "200")
	if size() != 3 || ts.requests.Load() != 3 {
		t.Fatalf("size %d, %d requests", size(), ts.requests.Load())
	}
	// Full, nothing expired: the token closest to expiry (s2's) goes.
	if got := apply("s4", "300"); got != "Bearer x-s4.300-4" {
		t.Fatalf("%q", got)
	}
	if size() != 3 {
		t.Fatalf("size %d after a fourth subject", size())
	}
	if _, ok := cachedToken(creds, key("s2", "50")); ok {
		t.Fatal("s2 still cached")
	}
	if got := apply("s1", "100"); got != "Bearer x-s1.100-1" {
		t.Fatalf("s1: %q", got)
	}
	if got := apply("s2", "50"); got != "Bearer x-s2.50-5" {
		t.Fatalf("s2 after eviction: %q", got)
	}
	if _, ok := cachedToken(creds, key("s1", "100")); ok {
		t.Fatal("s1 (now closest to expiry) still cached")
	}
	// s2 (50 s) and s3 (200 s), s4 (300 s) held. 150 s later s2 has
	// expired: a new subject evicts it, not s3, closer to expiry than s4.
	clk.advance(150 * time.Second)
	if got := apply("s5", "100"); got != "Bearer x-s5.100-6" {
		t.Fatalf("%q", got)
	}
	if _, ok := cachedToken(creds, key("s2", "50")); ok {
		t.Fatal("expired s2 still cached")
	}
	for _, k := range [][2]string{{"s3", "200"}, {"s4", "300"}, {"s5", "100"}} {
		if _, ok := cachedToken(creds, key(k[0], k[1])); !ok {
			t.Fatalf("%s evicted", k[0])
		}
	}
	// At 350 s, s3 (200 s), s4 (300 s) and s5 (250 s) have expired: a new
	// subject evicts all of them at once.
	clk.advance(200 * time.Second)
	apply("s6", "100")
	if size() != 1 {
		t.Fatalf("size %d after every other token expired, want 1", size())
	}
}
