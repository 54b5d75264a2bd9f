package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// flakyJWKS serves a JWK Set on loopback, or 500 while it is down, and
// counts its fetches and notes when each began.
type flakyJWKS struct {
	*httptest.Server
	down    atomic.Bool
	fetches atomic.Int32
	mu      sync.Mutex
	starts  []time.Time
}

// began returns when each fetch so far began.
func (s *flakyJWKS) began() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.starts...)
}

func newFlakyJWKS(t *testing.T, doc []byte) *flakyJWKS {
	t.Helper()
	s := &flakyJWKS{}
	s.down.Store(true)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.starts = append(s.starts, time.Now())
		s.mu.Unlock()
		s.fetches.Add(1)
		if s.down.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestJWKSRetriedPromptly: a JWKS never fetched because its server was
// down is retried with a short backoff, not after MinRefreshInterval:
// once the server is back, tokens verify within about RetryInterval.
// While it is down, requests keep being answered 503 and the fetches
// back off (RetryInterval, doubling) instead of one per request.
func TestJWKSRetriedPromptly(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-retry")
	js := newFlakyJWKS(t, jwksDoc([]testKey{rs}))
	set, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{
		RetryInterval:      50 * time.Millisecond,
		MinRefreshInterval: time.Hour, // the old bound: a test that waited for it would time out
		Logger:             quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	hs := serveMCP(t, v)
	token := sign(t, rs, claims(""), nil)

	// Down: 503 to every request, with fetches backing off: each begins
	// at least 50, 100, 200 ms after the one before (the backoff counts
	// from the end of the failed fetch), not one per request as the
	// requests come (every 5 ms and the time a request takes). The
	// requests go on until four fetches were made, however long a loaded
	// machine takes to make them.
	for deadline := time.Now().Add(30 * time.Second); js.fetches.Load() < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches in 30 s of a JWKS down, want 4 (backing off from 50 ms)", js.fetches.Load())
		}
		expectRefused(t, hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token)), 503, -32603, "1", "")
		time.Sleep(5 * time.Millisecond)
	}
	starts := js.began()
	for i, backoff := 1, 50*time.Millisecond; i < len(starts); i, backoff = i+1, 2*backoff {
		if gap := starts[i].Sub(starts[i-1]); gap < backoff {
			t.Errorf("fetch %d began %v after the one before, want at least the backoff (%v)", i+1, gap, backoff)
		}
	}

	// Back: the next fetch is at most the current backoff (400 ms) away.
	js.down.Store(false)
	back := time.Now()
	for {
		rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), token))
		if rep.Status == http.StatusOK {
			expectCalled(t, rep, "user-42")
			break
		}
		if time.Since(back) > 20*time.Second {
			t.Fatalf("still %d %s after the JWKS came back", rep.Status, rep.Raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestJWKSReady: Ready reports a remote set never fetched (it is not
// ready, and starts a fetch in the background without waiting on it), and
// turns nil once the set is fetched, without any request. A fixed set is
// always ready.
func TestJWKSReady(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-ready")
	js := newFlakyJWKS(t, jwksDoc([]testKey{rs}))
	set, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{RetryInterval: 20 * time.Millisecond, MinRefreshInterval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	ctx := context.Background()
	if err := v.Ready(ctx); err == nil {
		t.Fatal("ready before any fetch")
	}
	deadline := time.Now().Add(30 * time.Second)
	for js.fetches.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Ready started no fetch")
		}
		time.Sleep(time.Millisecond)
	}
	if err := v.Ready(ctx); err == nil {
		t.Fatal("ready while the JWKS is down")
	}
	js.down.Store(false)
	deadline = time.Now().Add(30 * time.Second)
	for v.Ready(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("not ready 30 s after the JWKS came back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := v.Verify(ctx, sign(t, rs, claims(""), nil)); err != nil {
		t.Errorf("ready, and the token is refused: %v", err)
	}

	fixed, err := auth.ParseJWKS(jwksDoc([]testKey{rs}))
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.Ready(ctx); err != nil {
		t.Errorf("a fixed set is not ready: %v", err)
	}
}

// TestJWKSHangingEndpoint: while the JWKS endpoint hangs, requests at
// start-up share one fetch: one is in flight, every request is answered
// 503 when it times out (not one Timeout after another, as when each
// waiter fetched in turn), and the next fetch begins no sooner than
// RetryInterval after the failed one ended (not after it began: a hanging
// fetch outlasts the backoff).
func TestJWKSHangingEndpoint(t *testing.T) {
	t.Parallel()
	// The n requests join the one fetch while it hangs: a Timeout of a
	// second is room for a loaded machine to start them all (one starting
	// after the fetch failed and its backoff passed would fetch again).
	const (
		timeout = time.Second
		retry   = 100 * time.Millisecond
		n       = 10
	)
	var (
		fetches, inFlight, maxInFlight atomic.Int32
		mu                             sync.Mutex
		starts                         []time.Time
	)
	stop := make(chan struct{})
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		fetches.Add(1)
		cur := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := maxInFlight.Load(); cur > m && !maxInFlight.CompareAndSwap(m, cur); m = maxInFlight.Load() {
		}
		select { // hang until the fetch times out
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(js.Close)
	t.Cleanup(func() { close(stop) }) // runs first: no handler outlives the test

	set, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{
		Timeout:            timeout,
		RetryInterval:      retry,
		MinRefreshInterval: time.Hour,
		Logger:             quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	token := sign(t, rsaKey("rs-hang"), claims(""), nil)

	began := time.Now()
	var wg sync.WaitGroup
	returned := make(chan time.Time, n)
	for range n {
		wg.Go(func() {
			_, err := v.Verify(context.Background(), token)
			returned <- time.Now()
			expectCode(t, err, wymcp.AuthUnavailable)
		})
	}
	wg.Wait()
	close(returned)
	first := time.Now()
	var last time.Time
	for at := range returned {
		if at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	// Waiters fetching in turn would answer the last after n Timeouts; the
	// bound is half that, room for a loaded machine to start n goroutines.
	if d := last.Sub(began); d >= n/2*timeout {
		t.Errorf("the last of %d requests was answered after %v, want about one Timeout (%v), not one after another", n, d, timeout)
	}
	if got := fetches.Load(); got != 1 {
		t.Errorf("%d fetches for %d concurrent requests while the endpoint hangs, want 1", got, n)
	}
	if got := maxInFlight.Load(); got != 1 {
		t.Errorf("%d fetches in flight at once, want 1", got)
	}

	// Requests keep coming: the next fetch waits for the backoff, counted
	// from the end of the failed fetch (no later than the first answer).
	deadline := time.Now().Add(30 * time.Second)
	for fetches.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no second fetch within 30 s")
		}
		_, err := v.Verify(context.Background(), token)
		expectCode(t, err, wymcp.AuthUnavailable)
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	second := starts[1]
	mu.Unlock()
	if gap := second.Sub(first); gap < retry-10*time.Millisecond {
		t.Errorf("the second fetch began %v after the first failed, want at least RetryInterval (%v)", gap, retry)
	}
}

// TestJWKSFetchOutlivesItsCaller: the first fetch of a set, begun for a
// request whose client then leaves, is not cancelled with it: it ends with
// the set installed, not as a failure that would hold every other request
// to a backoff of 503s.
func TestJWKSFetchOutlivesItsCaller(t *testing.T) {
	t.Parallel()
	rs := rsaKey("rs-leave")
	doc := jwksDoc([]testKey{rs})
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	js := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))
	t.Cleanup(js.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	set, err := auth.NewRemoteJWKS(js.URL, &auth.JWKSOptions{RetryInterval: time.Hour, MinRefreshInterval: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	v := mustJWT(t, set)
	token := sign(t, rs, claims(""), nil)
	leaving, leave := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(leaving, token)
		done <- err
	}()
	<-arrived // the fetch is under way
	leave()
	close(release)
	<-done
	// With the hour-long backoffs, a fetch that had failed would leave
	// every request refused; the set fetched for the caller who left
	// serves the next one at once.
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := v.Verify(context.Background(), token)
		if err == nil && p != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first caller left, a token still fails: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
