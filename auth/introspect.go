package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// The defaults that zero fields of IntrospectionOptions stand for, each
// stated in its field's documentation too.
const (
	// defaultIntrospectionCacheTTL is the longest an active answer is
	// reused (never past the token's exp). Introspection is how opaque
	// tokens are revoked early; a minute bounds how long a revoked token
	// still works, while sparing the authorization server a round trip
	// per request.
	defaultIntrospectionCacheTTL = time.Minute
	// defaultIntrospectionNegativeTTL is how long a refusal (an inactive
	// token, an answer that fails a check) is reused: long enough that a
	// client retrying a dead token in a loop costs the authorization server
	// little, short enough not to matter to a token not yet valid.
	defaultIntrospectionNegativeTTL = 5 * time.Second
	// defaultMaxIntrospectionCalls bounds the calls to the endpoint in
	// flight at once. Each token not seen before costs one call, so
	// without a bound anyone could make the server open as many calls to
	// the authorization server as requests it can send; a server busy with
	// this many is answering its callers slowly already.
	defaultMaxIntrospectionCalls = 64
	// maxIntrospectionBytes bounds an introspection answer; real ones are
	// a few hundred bytes.
	maxIntrospectionBytes = 64 << 10
)

// IntrospectionOptions configures an [Introspection] authenticator. A nil
// *IntrospectionOptions, and every zero field, means the documented
// default.
type IntrospectionOptions struct {
	// Issuer, when set, must equal the answer's iss whenever the answer
	// has one (RFC 7662 §2.2 makes iss optional).
	Issuer string
	// HTTPClient calls the endpoint; nil means a client of its own.
	// Redirects are never followed: the client's credentials go to the
	// configured endpoint only.
	HTTPClient *http.Client
	// Timeout bounds one introspection; 0 means 5 s.
	Timeout time.Duration
	// CacheTTL is the longest an active answer is reused, never past the
	// token's exp; 0 means 1 minute; negative turns the cache of active
	// answers off.
	CacheTTL time.Duration
	// NegativeCacheTTL is how long a refusal (an inactive token, an
	// answer that fails a check) is reused; 0 means 5 s; negative turns
	// the cache of refusals off. An endpoint that could not answer is
	// never cached.
	NegativeCacheTTL time.Duration
	// CacheSize is the number of active answers remembered; 0 means 4096.
	// Refusals are remembered apart, in a cache of the same size, so that
	// a flood of unknown tokens never evicts a valid one.
	CacheSize int
	// MaxConcurrentCalls bounds the calls to the endpoint in flight at
	// once; 0 means 64. A request whose token would need one more call is
	// answered at once with AuthUnavailable (503 with Retry-After);
	// requests with a token already being asked about wait for that call
	// instead.
	MaxConcurrentCalls int
}

// Introspection authenticates requests that carry an opaque access token,
// asking the authorization server about each token (RFC 7662), as a
// confidential client (client_secret_basic, RFC 6749 §2.3.1). An answer is
// accepted when it is active, has an exp in the future (a token without
// one is refused, as with JWTs: nothing would end it; exp and nbf are
// NumericDates, whose fraction is dropped, and one that is not a valid
// time — not a number, negative, past the int64 seconds — refuses the
// token), names the audience
// among its aud values (MCP: the resource server must check that the
// token was issued for it), carries the issuer when one is configured and
// the answer names one, has token_type Bearer when it has one, and says
// who the token stands for by the rules of [JWT]'s claims: Subject is sub
// (a non-empty string when present), ClientID is client_id (else azp), and
// an answer without a sub must name its client.
//
// An endpoint that cannot be reached, that times out, or that answers
// anything but a 200 with an introspection document (its 401 to wrong
// client credentials included) is AuthUnavailable: the server answers 503
// with Retry-After and logs it, since the token may well be valid and a
// 401 would make the client discard it.
//
// The calls to the endpoint are bounded, because each token not seen
// before costs one (docs/design.md §6): at most MaxConcurrentCalls are in
// flight (a request that would need one more is answered 503 at once);
// concurrent requests with the same token share one call; and a call ends
// when the last request waiting on it does (the client went away), so no
// call outlives the requests that need it. Answers are cached: active ones
// until the earlier of exp and CacheTTL, refusals for NegativeCacheTTL, in
// a cache of their own so that a flood of unknown tokens cannot evict the
// valid ones. An Introspection is safe for concurrent use.
type Introspection struct {
	endpoint string
	id       string
	secret   string
	audience string
	issuer   string
	client   *http.Client
	timeout  time.Duration
	ttl      time.Duration
	negTTL   time.Duration
	cache    *tokenCache[*wymcp.Principal] // active answers
	refused  *tokenCache[error]            // refusals, apart
	// calls is a semaphore of MaxConcurrentCalls slots, one per call in
	// flight.
	calls chan struct{}

	mu     sync.Mutex
	flying map[string]*flight
}

// flight is one call to the endpoint that concurrent requests share. Its
// context is cancelled when the last of them leaves.
type flight struct {
	cancel  context.CancelFunc
	waiters int // the requests waiting on it; under Introspection.mu
	done    chan struct{}
	p       *wymcp.Principal // set before done is closed
	err     error
}

// NewIntrospection returns an authenticator that introspects tokens at
// endpoint (https, or http to a loopback host: the client secret travels
// with every call) as the client clientID with clientSecret, and accepts
// those issued for audience (this server's canonical resource URI).
func NewIntrospection(endpoint, clientID, clientSecret, audience string, opts *IntrospectionOptions) (*Introspection, error) {
	if err := checkEndpoint(endpoint); err != nil {
		return nil, fmt.Errorf("auth: introspection endpoint: %w", err)
	}
	if clientID == "" || clientSecret == "" {
		return nil, errors.New("auth: NewIntrospection needs the resource server's client id and secret")
	}
	if audience == "" {
		return nil, errors.New("auth: NewIntrospection needs the audience: this server's resource URI")
	}
	if opts == nil {
		opts = &IntrospectionOptions{}
	}
	in := &Introspection{
		endpoint: endpoint,
		id:       clientID,
		secret:   clientSecret,
		audience: audience,
		issuer:   opts.Issuer,
		client:   noRedirects(opts.HTTPClient),
		timeout:  orDefault(opts.Timeout, defaultFetchTimeout),
		ttl:      opts.CacheTTL,
		negTTL:   opts.NegativeCacheTTL,
		calls:    make(chan struct{}, orDefault(opts.MaxConcurrentCalls, defaultMaxIntrospectionCalls)),
		flying:   map[string]*flight{},
	}
	if in.ttl == 0 {
		in.ttl = defaultIntrospectionCacheTTL
	}
	if in.ttl > 0 {
		in.cache = newTokenCache[*wymcp.Principal](opts.CacheSize)
	}
	if in.negTTL == 0 {
		in.negTTL = defaultIntrospectionNegativeTTL
	}
	if in.negTTL > 0 {
		in.refused = newTokenCache[error](opts.CacheSize)
	}
	return in, nil
}

var _ wymcp.Authenticator = (*Introspection)(nil)

// Authenticate reads the bearer token of r (see [BearerToken]) and
// introspects it (see [Introspection]): it returns the principal of an
// active token, or a [*wymcp.AuthError]: AuthInvalidToken for a token the
// authorization server says is inactive or that fails a check,
// AuthUnavailable when the endpoint could not answer, or when
// MaxConcurrentCalls calls are in flight already and the token is not the
// subject of one. ctx bounds the call (with Timeout): a caller whose ctx
// ends stops waiting, and the call is cancelled when no other caller waits
// for it.
func (in *Introspection) Authenticate(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
	token, err := bearer(r) // introspect checks the token's characters
	if err != nil {
		return nil, err
	}
	return in.introspect(ctx, token)
}

var (
	errInactive     = invalid("the token is not active", nil)
	errBadExp       = invalid("the token's expiry (exp) is not a valid time", nil)
	errBadNbf       = invalid("the token's start (nbf) is not a valid time", nil)
	errTooManyCalls = unavailable(errors.New("auth: introspection: MaxConcurrentCalls calls to the endpoint are in flight already"))
)

// introspect returns the principal of an active token (checking its
// syntax first, as [BearerToken] does, unless the same token was answered
// before), or Authenticate's refusals.
func (in *Introspection) introspect(ctx context.Context, token string) (*wymcp.Principal, error) {
	now := time.Now()
	if p, ok := in.cache.get(token, now); ok {
		return p, nil
	}
	if err, ok := in.refused.get(token, now); ok {
		return nil, err
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	f, err := in.join(ctx, token)
	if err != nil {
		return nil, err
	}
	select {
	case <-f.done:
		return f.p, f.err
	case <-ctx.Done():
		in.leave(token, f)
		return nil, unavailable(ctx.Err())
	}
}

// join returns the call in flight for token, counting the caller among
// its waiters, or starts one when a slot of the MaxConcurrentCalls bound
// is free. The call runs on its own goroutine, so that a waiter can leave
// (its request ended) while others stay; its context keeps the starting
// request's values (its span) but not its end, which leave decides.
func (in *Introspection) join(ctx context.Context, token string) (*flight, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if f, ok := in.flying[token]; ok {
		f.waiters++
		return f, nil
	}
	select {
	case in.calls <- struct{}{}:
	default:
		return nil, errTooManyCalls
	}
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &flight{cancel: cancel, waiters: 1, done: make(chan struct{})}
	in.flying[token] = f
	go in.fly(callCtx, token, f)
	return f, nil
}

// fly makes f's call, then frees its slot and lets its waiters go.
func (in *Introspection) fly(ctx context.Context, token string, f *flight) {
	f.p, f.err = in.call(ctx, token)
	f.cancel()
	in.mu.Lock()
	if in.flying[token] == f {
		delete(in.flying, token)
	}
	in.mu.Unlock()
	<-in.calls
	close(f.done)
}

// leave takes a waiter whose request ended off f; the last one to leave
// cancels the call, which no one needs any more, and a later request with
// the token starts a call of its own.
func (in *Introspection) leave(token string, f *flight) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f.waiters--
	if f.waiters > 0 {
		return
	}
	if in.flying[token] == f {
		delete(in.flying, token)
	}
	f.cancel()
}

// introspection holds the members of an RFC 7662 §2.2 answer read here.
// exp and nbf are kept as their JSON text, for numericDate to read: a
// NumericDate (RFC 7519 §2) may have a fraction, and one that is not a
// valid time refuses the token, not the whole answer.
type introspection struct {
	Active    bool           `json:"active"`
	Scope     string         `json:"scope"`
	TokenType string         `json:"token_type"`
	Iss       string         `json:"iss"`
	Exp       jsontext.Value `json:"exp"`
	Nbf       jsontext.Value `json:"nbf"`
	Aud       any            `json:"aud"` // a string or an array of strings
}

// numericDate reads an answer's exp or nbf, raw: present is false when
// the member is absent or null; ok is false when it is present but not a
// valid time: not a number, negative, or past the int64 seconds (a huge
// but representable one is kept, and bounded where it is used). A
// fraction is dropped: secs is the whole seconds. An integer is read
// exactly; any other number as a float64.
func numericDate(raw jsontext.Value) (secs int64, present, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false, true
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, true, false // a string, a boolean, an object or an array
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true, n >= 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	// 2⁶³ is the first float64 past the int64 range; !(f >= 0) holds NaN.
	if err != nil || !(f >= 0) || f >= 1<<63 {
		return 0, true, false
	}
	return int64(f), true, true
}

// call asks the endpoint about token, checks the answer and caches it.
func (in *Introspection) call(ctx context.Context, token string) (*wymcp.Principal, error) {
	ctx, cancel := context.WithTimeout(ctx, in.timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, unavailable(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the id and secret are form-encoded before Basic.
	req.SetBasicAuth(url.QueryEscape(in.id), url.QueryEscape(in.secret))
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, unavailable(fmt.Errorf("introspection at %s: %w", in.endpoint, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionBytes+1))
	if err != nil {
		return nil, unavailable(fmt.Errorf("introspection at %s: %w", in.endpoint, err))
	}
	if resp.StatusCode != http.StatusOK {
		// A 401 means our own credentials are wrong: the operator's
		// problem, not the client's, whose token may be fine.
		return nil, unavailable(fmt.Errorf("introspection at %s: %s", in.endpoint, resp.Status))
	}
	if len(body) > maxIntrospectionBytes {
		return nil, unavailable(fmt.Errorf("introspection at %s: the answer is larger than %d bytes", in.endpoint, maxIntrospectionBytes))
	}
	var ans introspection
	if err := strictjson.Unmarshal(body, &ans); err != nil {
		return nil, unavailable(fmt.Errorf("introspection at %s: the answer is not an introspection document: %w", in.endpoint, err))
	}
	now := time.Now()
	p, refusal := in.principal(&ans, body, now)
	if refusal != nil {
		in.refused.put(token, refusal, now.Add(in.negTTL))
		return nil, refusal
	}
	until := now.Add(in.ttl)
	if p.Expiry.Before(until) {
		until = p.Expiry
	}
	in.cache.put(token, p, until)
	return p, nil
}

// principal applies the acceptance rules to an answer, ans decoded from
// body, and returns the principal of an accepted one: who it stands for
// follows the rules of a JWT's claims (identify).
func (in *Introspection) principal(ans *introspection, body []byte, now time.Time) (*wymcp.Principal, error) {
	if err := in.check(ans, now); err != nil {
		return nil, err
	}
	var claims map[string]any
	_ = strictjson.Unmarshal(body, &claims) // decoded once already: cannot fail
	sub, client, err := identify(claims)
	if err != nil {
		return nil, err
	}
	exp, _, _ := numericDate(ans.Exp) // check read it: present and valid
	return &wymcp.Principal{
		Subject:  sub,
		ClientID: client,
		Scopes:   scopesOf(ans.Scope),
		Expiry:   time.Unix(min(exp, maxNumericDate), 0),
		Claims:   claims,
	}, nil
}

// check applies the acceptance rules to an answer's members. exp and nbf
// are compared with now in Unix seconds, as integers (a fraction dropped):
// converted to a time.Time first, a huge nbf would wrap around to the past
// and pass. An exp or nbf that is not a valid time refuses the token: an
// authorization server that says something invalid about a token has not
// vouched for it (and its answer is cached as a refusal, not retried).
func (in *Introspection) check(ans *introspection, now time.Time) error {
	// For an integer t, now < t exactly when now's whole seconds are.
	secs := now.Unix()
	exp, hasExp, expOK := numericDate(ans.Exp)
	nbf, hasNbf, nbfOK := numericDate(ans.Nbf)
	switch {
	case !ans.Active:
		return errInactive
	case !expOK:
		return errBadExp
	case !hasExp:
		return invalid("the token has no expiry", nil)
	case secs >= exp:
		return invalid("the token has expired", nil)
	case !nbfOK:
		return errBadNbf
	case hasNbf && secs < nbf:
		return invalid("the token is not valid yet", nil)
	case !audienceHas(ans.Aud, in.audience):
		return invalid("the token was issued for another resource", nil)
	case in.issuer != "" && ans.Iss != "" && ans.Iss != in.issuer:
		return invalid("the token is from another issuer", nil)
	case ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer"):
		return invalid("the token is not a bearer token", nil)
	}
	return nil
}

// audienceHas reports whether an aud value (a string or an array of
// strings) contains audience.
func audienceHas(aud any, audience string) bool {
	switch aud := aud.(type) {
	case string:
		return aud == audience
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok && s == audience {
				return true
			}
		}
	}
	return false
}
