package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"
)

// The defaults that zero fields of JWKSOptions stand for, each stated in
// its field's documentation too.
const (
	// defaultFetchTimeout bounds one fetch of a JWKS or one introspection:
	// long enough for a distant authorization server, short enough that a
	// request waiting on it is answered (503) while its client still waits.
	defaultFetchTimeout = 5 * time.Second
	// defaultJWKSMaxAge is how long a fetched set is used before it is
	// fetched again (in the background: requests keep using the old set
	// meanwhile). Authorization servers publish a new key well before
	// signing with it, and an unknown kid triggers a fetch anyway.
	defaultJWKSMaxAge = 15 * time.Minute
	// defaultMinRefreshInterval is the least time between two fetches of a
	// set. A token naming a kid the set lacks triggers a fetch (the
	// authorization server may have rotated its keys), and without this
	// bound anyone could make the server fetch on every request.
	defaultMinRefreshInterval = 30 * time.Second
	// defaultJWKSRetryInterval is the wait after the first failed fetch of
	// a set never fetched, before the next; each failure doubles it, up to
	// MinRefreshInterval. Until a set is held no token can be verified and
	// every request is answered 503, so an authorization server that comes
	// back is tried again within about a second, not after
	// MinRefreshInterval.
	defaultJWKSRetryInterval = time.Second
	// defaultMaxJWKSBytes bounds a fetched document: a set of a dozen RSA
	// keys is ~10 KiB.
	defaultMaxJWKSBytes = 256 << 10
	// defaultMaxJWKSKeys bounds the keys of a set.
	defaultMaxJWKSKeys = 64
)

// JWKSOptions configures a remote [JWKS]. A nil *JWKSOptions, and every
// zero field, means the documented default.
type JWKSOptions struct {
	// HTTPClient fetches the set; nil means a client of the JWKS's own
	// (http.DefaultTransport's settings). Redirects are never followed,
	// whatever the client says: the set comes from the configured URL or
	// not at all.
	HTTPClient *http.Client
	// Timeout bounds one fetch; 0 means 5 s.
	Timeout time.Duration
	// MaxAge is how long a fetched set is used before it is refreshed in
	// the background; 0 means 15 minutes.
	MaxAge time.Duration
	// MinRefreshInterval is the least time between two fetches once a
	// set is held; 0 means 30 s.
	MinRefreshInterval time.Duration
	// RetryInterval is the least time, while no set was ever fetched,
	// from the end of a failed fetch to the next fetch: it starts here
	// after the first failure and doubles with each further one, up to
	// MinRefreshInterval; 0 means 1 s. Requests that wait while a fetch
	// runs share its failure: one fetch runs at a time, and at most one per
	// interval.
	RetryInterval time.Duration
	// MaxBytes bounds the fetched document; 0 means 256 KiB.
	MaxBytes int64
	// MaxKeys bounds the keys of the set; 0 means 64.
	MaxKeys int
	// Logger receives failed fetches at Warn; nil means slog.Default().
	Logger *slog.Logger
}

// JWKS is a JSON Web Key Set (RFC 7517 §5): the public keys that JWT
// access tokens are verified with, selected by the token's kid. It is
// either fixed (ParseJWKS: a file the operator manages) or fetched from the
// authorization server's jwks_uri (NewRemoteJWKS) and kept fresh. A JWKS
// is safe for concurrent use.
//
// A remote set is fetched on first use, not when it is made, so that a
// server can start while its authorization server is still coming up (a
// call of [JWKS.Ready] starts the fetch in the background, for a server
// that wants it fetched eagerly); until one fetch succeeds it is retried
// with a short backoff (JWKSOptions.RetryInterval), and Ready reports it
// not ready. No URL other than the configured one is ever fetched: a
// token's jku, x5u and jwk headers are ignored.
type JWKS struct {
	url        string // "" for a fixed set
	client     *http.Client
	timeout    time.Duration
	maxAge     time.Duration
	minRefresh time.Duration
	retry      time.Duration
	maxBytes   int64
	maxKeys    int
	logger     *slog.Logger

	set atomic.Pointer[keySet]
	// fetching is a one-slot semaphore: one fetch at a time, and a waiter
	// can give up when its request ends (a sync.Mutex cannot).
	fetching chan struct{}
	// next is the earliest time (unix nanoseconds) a fetch that is not
	// forced may begin: MinRefreshInterval after the last fetch began (or,
	// when it failed, ended), or, while no set was ever fetched, the
	// backoff after the last failure ended. Written under fetching, as
	// backoff is.
	next    atomic.Int64
	backoff time.Duration
	// fetches counts the fetches that ended; lastErr is the error of the
	// last one (nil when it succeeded). A caller that waited for fetching
	// while a fetch ran takes that fetch's result instead of starting
	// another: written under fetching, fetches read before it is taken.
	fetches    atomic.Uint64
	lastErr    error
	background atomic.Bool // a background refresh is running
}

// keySet is one version of the set's keys.
type keySet struct {
	byKid   map[string][]*jwk
	fetched time.Time
}

// ParseJWKS returns a fixed key set read from a JWK Set document, such as
// a file the operator keeps. It fails on a document that is not a JWK Set,
// that holds a private key, that holds more than 64 keys, or in which no
// key can verify tokens.
func ParseJWKS(doc []byte) (*JWKS, error) {
	byKid, n, err := parseKeySet(doc, defaultMaxJWKSKeys)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if n == 0 {
		return nil, errors.New("auth: the JWKS holds no key that can verify tokens (RSA of 2048 bits or more, EC P-256 or P-384)")
	}
	k := &JWKS{}
	k.set.Store(&keySet{byKid: byKid})
	return k, nil
}

// NewRemoteJWKS returns a key set fetched from jwksURL (the authorization
// server's jwks_uri). The URL must be https, or http to a loopback
// address: keys fetched in the clear from elsewhere could be anyone's.
func NewRemoteJWKS(jwksURL string, opts *JWKSOptions) (*JWKS, error) {
	if err := checkEndpoint(jwksURL); err != nil {
		return nil, fmt.Errorf("auth: JWKS URL: %w", err)
	}
	if opts == nil {
		opts = &JWKSOptions{}
	}
	k := &JWKS{
		url:        jwksURL,
		client:     noRedirects(opts.HTTPClient),
		timeout:    orDefault(opts.Timeout, defaultFetchTimeout),
		maxAge:     orDefault(opts.MaxAge, defaultJWKSMaxAge),
		minRefresh: orDefault(opts.MinRefreshInterval, defaultMinRefreshInterval),
		retry:      orDefault(opts.RetryInterval, defaultJWKSRetryInterval),
		maxBytes:   orDefault(opts.MaxBytes, defaultMaxJWKSBytes),
		maxKeys:    orDefault(opts.MaxKeys, defaultMaxJWKSKeys),
		logger:     opts.Logger,
		fetching:   make(chan struct{}, 1),
	}
	if k.logger == nil {
		k.logger = slog.Default()
	}
	return k, nil
}

// errRateLimited: the set was fetched too recently to fetch it again.
var errRateLimited = errors.New("JWKS fetched less than MinRefreshInterval ago, or retried too soon after a failure")

// errNoKeySet: Ready's answer while a remote set was never fetched.
var errNoKeySet = errors.New("auth: the JWKS has not been fetched yet")

// Ready reports whether tokens can be verified: nil once a set is held (a
// fixed set always is; a remote one after its first successful fetch).
// Until then it starts a fetch in the background, within the retry
// backoff (see JWKSOptions.RetryInterval), and reports not ready; it never
// waits on the network, so it can answer a readiness probe (see
// wymcp.Readier). ctx is not used: the fetch outlives the probe.
func (k *JWKS) Ready(ctx context.Context) error {
	if k.set.Load() != nil {
		return nil
	}
	k.refreshInBackground()
	return errNoKeySet
}

// key returns the key that verifies a token with kid and alg. A kid the
// set lacks makes a remote set refresh (at most once per
// MinRefreshInterval) and look again: the authorization server may have
// rotated its keys. The error is a refusal an authenticator returns as it
// is: AuthInvalidToken for a key the set does not hold, AuthUnavailable
// when a remote set could never be fetched.
func (k *JWKS) key(ctx context.Context, kid, alg string) (*jwk, error) {
	set := k.set.Load()
	if set == nil {
		// Never fetched (or every fetch so far failed): fetch now.
		var err error
		if set, err = k.fetch(ctx); err != nil {
			return nil, unavailable(fmt.Errorf("fetching the JWKS: %w", err))
		}
	} else if k.url != "" && time.Since(set.fetched) > k.maxAge {
		k.refreshInBackground()
	}
	if key := set.find(kid, alg); key != nil {
		return key, nil
	}
	if k.url != "" {
		if fresh, err := k.fetch(ctx); err == nil {
			if key := fresh.find(kid, alg); key != nil {
				return key, nil
			}
		}
	}
	return nil, errUnknownKey
}

var errUnknownKey = invalid("the token's signing key is unknown", errors.New("no key for the token's kid and alg"))

// find returns the key for kid that can verify alg. A token without a kid
// is verified by the set's only key able to, when there is exactly one
// (some servers publish one key and omit kids); otherwise it names no key.
func (s *keySet) find(kid, alg string) *jwk {
	if kid != "" {
		for _, k := range s.byKid[kid] {
			if k.verifies(alg) {
				return k
			}
		}
		return nil
	}
	var only *jwk
	for _, keys := range s.byKid {
		for _, k := range keys {
			if k.verifies(alg) {
				if only != nil {
					return nil
				}
				only = k
			}
		}
	}
	return only
}

// holds reports whether key is still in the set, unchanged: a token
// verified with a key the authorization server has since dropped is no
// longer accepted from the cache.
func (s *keySet) holds(key *jwk) bool {
	for _, k := range s.byKid[key.kid] {
		if k == key {
			return true
		}
	}
	return false
}

// current returns the set in use (nil before a remote set's first fetch).
func (k *JWKS) current() *keySet { return k.set.Load() }

// fetch fetches the set and installs it, unless the last fetch began
// less than MinRefreshInterval ago or, while no set was ever fetched, the
// backoff since the last failure has not passed. Concurrent callers wait for one fetch and share its result, a
// failure as well as a new set: however many requests queue while the
// endpoint hangs, one fetch runs, and they are all answered when it ends,
// not one Timeout after another. A caller whose ctx ends stops waiting.
func (k *JWKS) fetch(ctx context.Context) (*keySet, error) {
	before := k.set.Load()
	ended := k.fetches.Load()
	select {
	case k.fetching <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-k.fetching }()
	if set := k.set.Load(); set != before {
		// Another caller fetched a new set while this one waited: use it.
		return set, nil
	}
	if k.fetches.Load() != ended && k.lastErr != nil {
		// Another caller's fetch failed while this one waited: fetching
		// again at once would only wait out the same Timeout again.
		return nil, k.lastErr
	}
	now := time.Now()
	if now.UnixNano() < k.next.Load() {
		return nil, errRateLimited
	}
	k.next.Store(now.Add(k.minRefresh).UnixNano())
	// The fetch is the set's, not the caller's: a client that leaves must
	// not turn it into a failure (a backoff for every other request), so
	// it ends at its own Timeout, not at the caller's cancellation.
	set, err := k.download(context.WithoutCancel(ctx))
	k.lastErr = err
	k.fetches.Add(1)
	if err != nil {
		k.failed(time.Now())
		k.logger.Warn("wymcp/auth: fetching the JWKS failed", slog.String("url", k.url), slog.String("error", err.Error()))
		return nil, err
	}
	k.backoff = 0
	k.set.Store(set)
	return set, nil
}

// failed sets when the next fetch may begin after one that failed at
// end: counted from its end, not its start, since a fetch that hangs
// lasts its whole Timeout, longer than the first backoffs. While a set is
// held that is MinRefreshInterval later (the old set serves meanwhile).
// While none was ever fetched every request is refused, so the set is
// tried again sooner: RetryInterval after the first failure, doubling
// with each further one up to MinRefreshInterval. Called under fetching.
func (k *JWKS) failed(end time.Time) {
	if k.set.Load() != nil {
		k.next.Store(end.Add(k.minRefresh).UnixNano())
		return
	}
	if k.backoff == 0 {
		k.backoff = min(k.retry, k.minRefresh)
	} else {
		k.backoff = min(2*k.backoff, k.minRefresh)
	}
	k.next.Store(end.Add(k.backoff).UnixNano())
}

// refreshInBackground refreshes a stale set without holding up the
// request that noticed: it goes on with the set it has.
func (k *JWKS) refreshInBackground() {
	if !k.background.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer k.background.Store(false)
		_, _ = k.fetch(context.Background())
	}()
}

// download GETs the set, within the timeout and the size and key bounds,
// and keeps the *jwk of every key that did not change.
func (k *JWKS) download(ctx context.Context) (*keySet, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", k.url, resp.Status)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, k.maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(doc)) > k.maxBytes {
		return nil, fmt.Errorf("GET %s: the JWKS is larger than %d bytes", k.url, k.maxBytes)
	}
	byKid, n, err := parseKeySet(doc, k.maxKeys)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("the JWKS holds no key that can verify tokens")
	}
	if old := k.set.Load(); old != nil {
		for kid, keys := range byKid {
			for i, nk := range keys {
				for _, ok := range old.byKid[kid] {
					if ok.material == nk.material && ok.alg == nk.alg {
						keys[i] = ok
					}
				}
			}
		}
	}
	return &keySet{byKid: byKid, fetched: time.Now()}, nil
}

// checkEndpoint accepts an https URL, or an http one to a loopback host
// (a local authorization server, a test). Anything else would carry keys,
// or a client secret, in the clear.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			return nil
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%q: http is allowed only to a loopback host; use https", raw)
	}
	return fmt.Errorf("%q: the scheme must be https", raw)
}

// noRedirects returns a copy of c (or of a default client) that does not
// follow redirects: an endpoint is fetched from its configured URL only.
func noRedirects(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &cp
}

// orDefault returns v, or def when v is zero or negative.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
