package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// blockingAS is an introspection endpoint on loopback whose calls wait
// until released (or until the caller cancels them), so that a test can
// hold calls in flight. Tokens starting "valid-" are active (sub: the
// token); any other is inactive.
type blockingAS struct {
	*httptest.Server
	calls     atomic.Int32
	inFlight  atomic.Int32
	block     atomic.Bool
	release   chan struct{}
	cancelled chan string // the tokens of calls whose context ended
}

func newBlockingAS(t *testing.T, block bool) *blockingAS {
	t.Helper()
	as := &blockingAS{release: make(chan struct{}), cancelled: make(chan string, 100)}
	as.block.Store(block)
	exp := time.Now().Add(time.Hour).Unix()
	as.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.calls.Add(1)
		as.inFlight.Add(1)
		defer as.inFlight.Add(-1)
		token := r.PostFormValue("token")
		if as.block.Load() {
			select {
			case <-as.release:
			case <-r.Context().Done():
				as.cancelled <- token
				return
			}
		}
		ans := map[string]any{"active": false}
		if strings.HasPrefix(token, "valid-") {
			ans = map[string]any{"active": true, "sub": token, "aud": testAudience, "exp": exp}
		}
		_ = json.NewEncoder(w).Encode(ans)
	}))
	t.Cleanup(func() {
		as.unblock()
		as.Close()
	})
	return as
}

// unblock releases every call, held and to come.
func (as *blockingAS) unblock() {
	if as.block.CompareAndSwap(true, false) {
		close(as.release)
	}
}

// waitInFlight waits until n calls are held at the endpoint.
func (as *blockingAS) waitInFlight(t *testing.T, n int32) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for as.inFlight.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in flight at the endpoint, want %d", as.inFlight.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func newBoundedIntrospection(t *testing.T, url string, opts *auth.IntrospectionOptions) *auth.Introspection {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second // longer than any test: only a cancellation ends a call early
	}
	in, err := auth.NewIntrospection(url, rsID, rsSecret, testAudience, opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// expectCode asserts that err is a *wymcp.AuthError of code.
func expectCode(t *testing.T, err error, code wymcp.AuthCode) {
	t.Helper()
	var ae *wymcp.AuthError
	if !errors.As(err, &ae) || ae.Code != code {
		t.Errorf("error %v, want a *wymcp.AuthError %v", err, code)
	}
}

// TestIntrospectionConcurrencyCap: at most MaxConcurrentCalls calls to the
// endpoint are in flight; a request whose token would need one more is
// answered AuthUnavailable (503) at once, without a call, while a request
// with a token already in flight waits for that call (docs/design.md §6).
func TestIntrospectionConcurrencyCap(t *testing.T) {
	t.Parallel()
	as := newBlockingAS(t, true)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{MaxConcurrentCalls: 4})
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			p, err := in.Introspect(ctx, "valid-"+strconv.Itoa(i))
			if err != nil || p.Subject != "valid-"+strconv.Itoa(i) {
				t.Errorf("held token %d: %v, %v", i, p, err)
			}
		})
	}
	as.waitInFlight(t, 4)
	joined := make(chan error, 1)
	go func() { _, err := in.Introspect(ctx, "valid-0"); joined <- err }() // shares a call: no slot needed

	began := time.Now()
	_, err := in.Introspect(ctx, "valid-5")
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("the request over the bound waited %v", d)
	}
	expectCode(t, err, wymcp.AuthUnavailable)
	if n := as.calls.Load(); n != 4 {
		t.Errorf("%d calls at the endpoint, want 4", n)
	}

	as.unblock()
	wg.Wait()
	if err := <-joined; err != nil {
		t.Errorf("a request sharing a call in flight: %v", err)
	}
	// The slots are free again.
	if _, err := in.Introspect(ctx, "valid-5"); err != nil {
		t.Errorf("after the calls ended: %v", err)
	}
}

// TestIntrospectionCapAnswers503: through the server, the request over
// the bound is answered 503 with Retry-After.
func TestIntrospectionCapAnswers503(t *testing.T) {
	t.Parallel()
	as := newBlockingAS(t, true)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{MaxConcurrentCalls: 1})
	go func() { _, _ = in.Introspect(context.Background(), "valid-held") }()
	as.waitInFlight(t, 1)
	hs := serveMCP(t, in)
	rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{}`), "valid-other"))
	expectRefused(t, rep, 503, -32603, "1", "")
	if got := rep.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q", got)
	}
}

// TestIntrospectionCoalesced: concurrent requests with one token cost one
// call, and all get its answer.
func TestIntrospectionCoalesced(t *testing.T) {
	t.Parallel()
	as := newBlockingAS(t, true)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{MaxConcurrentCalls: 1})
	var wg sync.WaitGroup
	var started atomic.Int32
	for range 20 {
		wg.Go(func() {
			started.Add(1)
			if p, err := in.Introspect(context.Background(), "valid-shared"); err != nil || p.Subject != "valid-shared" {
				t.Errorf("%v, %v", p, err)
			}
		})
	}
	as.waitInFlight(t, 1)
	for started.Load() != 20 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the last ones join
	as.unblock()
	wg.Wait()
	if n := as.calls.Load(); n != 1 {
		t.Errorf("%d calls for 20 concurrent requests with one token, want 1", n)
	}
}

// TestIntrospectionCancelled: a call lasts while a request waits for it.
// When some of its waiters leave it goes on; when the last one leaves,
// the call to the endpoint is cancelled (its request's context ends), not
// left running to its Timeout; a later request starts a call of its own.
func TestIntrospectionCancelled(t *testing.T) {
	t.Parallel()
	as := newBlockingAS(t, true)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{MaxConcurrentCalls: 1})
	var cancels []context.CancelFunc
	var wg sync.WaitGroup
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		wg.Go(func() {
			_, err := in.Introspect(ctx, "valid-abandoned")
			expectCode(t, err, wymcp.AuthUnavailable)
		})
	}
	as.waitInFlight(t, 1)
	time.Sleep(50 * time.Millisecond) // let every waiter join
	cancels[0]()
	cancels[1]()
	select {
	case tok := <-as.cancelled:
		t.Fatalf("the call for %s was cancelled while a request still waited for it", tok)
	case <-time.After(100 * time.Millisecond):
	}
	began := time.Now()
	cancels[2]()
	select {
	case tok := <-as.cancelled:
		if tok != "valid-abandoned" {
			t.Errorf("cancelled the call for %q", tok)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call outlived every request that needed it")
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("the call ended %v after its last waiter left", d)
	}
	wg.Wait()

	// Its slot is freed, and the token is asked about again.
	as.unblock()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := in.Introspect(context.Background(), "valid-abandoned")
		if err == nil {
			if p.Subject != "valid-abandoned" {
				t.Errorf("subject %q", p.Subject)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the cancelled call: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := as.calls.Load(); n != 2 {
		t.Errorf("%d calls, want 2 (the cancelled one and its successor)", n)
	}
}

// TestIntrospectionNegativeCache: a refusal (an inactive token) is
// remembered for NegativeCacheTTL, so the same bad token again costs no
// call until then; a negative NegativeCacheTTL remembers none.
func TestIntrospectionNegativeCache(t *testing.T) {
	t.Parallel()
	// A second: the three asks must fall within it, however slow the
	// machine between them.
	const ttl = time.Second
	as := newBlockingAS(t, false)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{NegativeCacheTTL: ttl})
	ctx := context.Background()
	for range 3 {
		_, err := in.Introspect(ctx, "revoked")
		expectCode(t, err, wymcp.AuthInvalidToken)
	}
	if n := as.calls.Load(); n != 1 {
		t.Errorf("%d calls for one inactive token asked three times, want 1", n)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	_, err := in.Introspect(ctx, "revoked")
	expectCode(t, err, wymcp.AuthInvalidToken)
	if n := as.calls.Load(); n != 2 {
		t.Errorf("%d calls after NegativeCacheTTL, want 2", n)
	}

	off := newBlockingAS(t, false)
	none := newBoundedIntrospection(t, off.URL, &auth.IntrospectionOptions{NegativeCacheTTL: -1})
	for range 3 {
		_, err := none.Introspect(ctx, "revoked")
		expectCode(t, err, wymcp.AuthInvalidToken)
	}
	if n := off.calls.Load(); n != 3 {
		t.Errorf("%d calls with the negative cache off, want 3", n)
	}
}

// TestIntrospectionFloodKeepsValid: a flood of unknown tokens (each
// refused, each remembered a while) does not evict the valid tokens from
// the cache: they are still answered without a call (docs/design.md §6).
func TestIntrospectionFloodKeepsValid(t *testing.T) {
	t.Parallel()
	as := newBlockingAS(t, false)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{CacheSize: 256})
	ctx := context.Background()
	const valid = 64 // well under the cache's size, in every shard
	for i := range valid {
		if _, err := in.Introspect(ctx, "valid-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 400 {
				_, err := in.Introspect(ctx, "unknown-"+strconv.Itoa(w)+"-"+strconv.Itoa(i))
				expectCode(t, err, wymcp.AuthInvalidToken)
			}
		})
	}
	wg.Wait()
	before := as.calls.Load()
	for i := range valid {
		if _, err := in.Introspect(ctx, "valid-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := as.calls.Load() - before; n != 0 {
		t.Errorf("%d of %d cached valid tokens were asked for again after a flood of unknown ones", n, valid)
	}
}

// TestIntrospectionLongTokens: tokens over 4 KiB (up to MaxTokenBytes)
// are cached like short ones: a client retrying a dead 5 KB token costs
// one call, not one per request (the refusal is remembered), a valid
// 6 KB token is asked about once, and concurrent requests with one long
// token share one call.
func TestIntrospectionLongTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := newBlockingAS(t, false)
	in := newBoundedIntrospection(t, as.URL, &auth.IntrospectionOptions{})

	dead := "dead-" + strings.Repeat("D", 5000)
	for range 50 {
		_, err := in.Introspect(ctx, dead)
		expectCode(t, err, wymcp.AuthInvalidToken)
	}
	if n := as.calls.Load(); n != 1 {
		t.Errorf("%d calls for 50 requests with one dead 5 KB token, want 1", n)
	}

	valid := "valid-" + strings.Repeat("V", 6000)
	for range 10 {
		if p, err := in.Introspect(ctx, valid); err != nil || p.Subject != valid {
			t.Fatalf("a valid 6 KB token: %v", err)
		}
	}
	if n := as.calls.Load(); n != 2 {
		t.Errorf("%d calls after 10 requests with one valid 6 KB token, want 2 (one for each token)", n)
	}

	held := newBlockingAS(t, true)
	shared := newBoundedIntrospection(t, held.URL, &auth.IntrospectionOptions{MaxConcurrentCalls: 1})
	long := "valid-" + strings.Repeat("S", 7000)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := shared.Introspect(ctx, long); err != nil {
				t.Errorf("a long token sharing a call: %v", err)
			}
		})
	}
	held.waitInFlight(t, 1)
	time.Sleep(20 * time.Millisecond) // let the others join
	held.unblock()
	wg.Wait()
	if n := held.calls.Load(); n != 1 {
		t.Errorf("%d calls for 20 concurrent requests with one 7 KB token, want 1", n)
	}
}
