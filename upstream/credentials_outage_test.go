package upstream_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// backoffBound is the most token requests a backoff starting at 1 s and
// doubling allows in elapsed: the k-th retry comes at least 2^k - 1 s
// after the first failure. Derived from the time the test took, it
// bounds without assuming how fast the machine is.
func backoffBound(elapsed time.Duration) int32 {
	return 1 + int32(math.Floor(math.Log2(elapsed.Seconds()+1)))
}

// TestOutcomeUnauthorizedRepeated (issue 38): 50 calls to an upstream
// that answers 401 to every token: the first 401 drops the token and the
// call is retried with a fresh one; that one refused too, the later
// calls' 401s are their answer, not one token request each.
func TestOutcomeUnauthorizedRepeated(t *testing.T) {
	t.Parallel()
	ts := newOCTokenServer(t)
	f := newFakeUp(t, false)
	f.def = ocStatus(401, "application/json", `{"error":"invalid_token"}`)
	o := ocOpts(f)
	o.Credentials = ocClientCredentials(t, ts.URL)
	g := newOCGateway(t, nil, o)
	start := time.Now()
	for range 50 {
		ocToolError(t, g.call(t), "Upstream fake refused the gateway's credentials (HTTP 401).")
	}
	elapsed := time.Since(start)
	n := ts.fetches.Load()
	t.Logf("50 calls refused: %d token requests (Connect's included), %d upstream requests, in %v", n, f.calls.Load(), elapsed)
	if most := 1 + backoffBound(elapsed); n > most {
		t.Errorf("%d token requests for 50 calls refused in %v, want at most %d", n, elapsed, most)
	}
}

// TestOutcomeTokenEndpointDown (issue 38): the token endpoint answers 503
// once the gateway has connected; the token is dropped (a 401), and 50
// calls then need a new one: one request per backoff interval, every
// other call answered the endpoint's failure at once.
func TestOutcomeTokenEndpointDown(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	var asked atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			asked.Add(1)
			ocWrite(w, 503, `{"error":"temporarily_unavailable"}`)
			return
		}
		ocWrite(w, 200, `{"access_token":"tok","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(tokens.Close)
	f := newFakeUp(t, false, ocStatus(401, "application/json", `{"error":"invalid_token"}`))
	o := ocOpts(f)
	o.Credentials = ocClientCredentials(t, tokens.URL)
	g := newOCGateway(t, nil, o)
	down.Store(true)
	const want = "The gateway could not get credentials for upstream fake: client credentials: token endpoint: HTTP 503: temporarily_unavailable."
	start := time.Now()
	for range 50 {
		ocToolError(t, g.call(t), want)
	}
	elapsed := time.Since(start)
	n := asked.Load()
	t.Logf("50 calls while the token endpoint is down: %d token requests in %v", n, elapsed)
	if most := backoffBound(elapsed); n > most {
		t.Errorf("%d token requests for 50 calls in %v, want at most %d", n, elapsed, most)
	}
}
