package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// callRefused is one forwarded call to an upstream that answers 401 to
// every token, as client.call makes it: apply, the 401, and when refused
// says so one retry with fresh credentials. It returns the requests the
// upstream saw.
func callRefused(t *testing.T, ctx context.Context, creds Credentials) int {
	t.Helper()
	sent := 0
	for retried := false; ; retried = true {
		h := http.Header{}
		if err := creds.apply(ctx, h); err != nil {
			return sent
		}
		sent++
		if retried || !creds.refused(ctx, h) {
			return sent
		}
	}
}

// TestRefusedInvalidatesOnce (issue 38): 50 calls to an upstream that
// refuses every token cost two token requests (the first, and one fresh
// token after the first 401), not one per call: a token fetched after a
// 401 and refused too within the refusal backoff is the answer. Past the
// backoff one more is tried, and the backoff doubles.
func TestRefusedInvalidatesOnce(t *testing.T) {
	ts := newCredTokenServer(t, numberedTokens(3600))
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	clk := withCredClock(creds)
	ctx := context.Background()
	upstreamRequests := 0
	for range 50 {
		upstreamRequests += callRefused(t, ctx, creds)
	}
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("50 calls refused: %d token requests, want 2", n)
	}
	if upstreamRequests != 51 {
		t.Errorf("%d upstream requests, want 51 (the first call retried once)", upstreamRequests)
	}
	// The backoff passes: one more fresh token, then 2 s of backoff.
	clk.advance(backoffDelay(1))
	for range 50 {
		callRefused(t, ctx, creds)
	}
	if n := ts.requests.Load(); n != 3 {
		t.Fatalf("after the first backoff: %d token requests, want 3", n)
	}
	clk.advance(backoffDelay(1))
	callRefused(t, ctx, creds)
	if n := ts.requests.Load(); n != 3 {
		t.Fatalf("within the doubled backoff: %d token requests, want 3", n)
	}
	clk.advance(backoffDelay(2))
	callRefused(t, ctx, creds)
	if n := ts.requests.Load(); n != 4 {
		t.Fatalf("after the doubled backoff: %d token requests, want 4", n)
	}
}

// TestRefusedConcurrentInvalidatesOnce: 50 calls refused at once with the
// same token drop it once, and their retries share one fetch.
func TestRefusedConcurrentInvalidatesOnce(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		if n == 2 {
			close(asked)
			<-release
		}
		return numberedTokens(3600)(n, f)
	})
	creds, err := ClientCredentials(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	withCredClock(creds)
	ctx := context.Background()
	if got := applyBearer(t, ctx, creds); got != "Bearer tok-1" {
		t.Fatalf("%q", got)
	}
	var retries atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if creds.refused(ctx, bearerHeader("tok-1")) {
				retries.Add(1)
				h := http.Header{}
				if err := creds.apply(ctx, h); err != nil {
					t.Error(err)
				} else if got := h.Get("Authorization"); got != "Bearer tok-2" {
					t.Errorf("retry with %q", got)
				}
			}
		}()
	}
	close(start)
	// Whether a call's retry joins the fetch of tok-2 or finds it done,
	// it gets tok-2: hold the fetch until it is asked for, so that most
	// join it.
	<-asked
	close(release)
	wg.Wait()
	if n := ts.requests.Load(); n != 2 {
		t.Fatalf("%d token requests for 50 concurrent 401s, want 2", n)
	}
	if n := retries.Load(); n != 50 {
		t.Errorf("%d calls retried, want all 50 (each 401'd token was the stale one)", n)
	}
}

// TestTokenEndpointOutageBackoff (issue 38): while the token endpoint is
// down, calls without a valid token get its failure at once: one request
// per backoff interval, whatever the number of calls or callers, and the
// interval doubles up to maxBackoff.
func TestTokenEndpointOutageBackoff(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	ts := newCredTokenServer(t, func(n int64, f url.Values) (int, string) {
		if down.Load() {
			return http.StatusServiceUnavailable, `{"error":"temporarily_unavailable"}`
		}
		return exchangeAnswer(n, f)
	})
	creds, err := TokenExchange(credOAuthConfig(ts))
	if err != nil {
		t.Fatal(err)
	}
	clk := withCredClock(creds)
	const want = "upstream: token exchange: token endpoint: HTTP 503: temporarily_unavailable"
	calls := func(round int) {
		t.Helper()
		for i := range 50 {
			// 50 callers, each with a token of its own.
			ctx := credCallerCtx(fmt.Sprintf("sub:u%d", i), fmt.Sprintf("r%d-u%d", round, i))
			if err := creds.apply(ctx, http.Header{}); err == nil || err.Error() != want {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}
	calls(0)
	if n := ts.requests.Load(); n != 1 {
		t.Fatalf("50 calls while the endpoint is down: %d token requests, want 1", n)
	}
	total := int64(1)
	for k := 1; k <= 7; k++ {
		clk.advance(backoffDelay(k) / 2)
		calls(k)
		if n := ts.requests.Load(); n != total {
			t.Fatalf("within backoff %d: %d token requests, want %d", k, n, total)
		}
		clk.advance(backoffDelay(k) - backoffDelay(k)/2)
		calls(k)
		total++
		if n := ts.requests.Load(); n != total {
			t.Fatalf("after backoff %d (%v): %d token requests, want %d", k, backoffDelay(k), n, total)
		}
	}
	if backoffDelay(7) != maxBackoff {
		t.Errorf("backoff after 7 failures %v, want the cap %v", backoffDelay(7), maxBackoff)
	}
	// Back: the next call past the backoff gets its token.
	down.Store(false)
	clk.advance(maxBackoff)
	if got := applyBearer(t, credCallerCtx("sub:alice", "alice.1"), creds); got != fmt.Sprintf("Bearer x-alice.1-%d", total+1) {
		t.Fatalf("after the outage: %q", got)
	}
}
