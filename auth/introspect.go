package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// The defaults that zero fields of IntrospectionOptions stand for.
const (
	// DefaultIntrospectionCacheTTL is the longest an active answer is
	// reused (never past the token's exp). Introspection is how opaque
	// tokens are revoked early; a minute bounds how long a revoked token
	// still works, while sparing the authorization server a round trip
	// per request.
	DefaultIntrospectionCacheTTL = time.Minute
	// inactiveTTL is how long an inactive answer is reused: long enough
	// that a client retrying a dead token in a loop costs the authorization
	// server little, short enough not to matter to a token not yet valid.
	inactiveTTL = 10 * time.Second
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
	// Timeout bounds one introspection; 0 means DefaultFetchTimeout (5 s).
	Timeout time.Duration
	// CacheTTL is the longest an active answer is reused, never past the
	// token's exp; 0 means DefaultIntrospectionCacheTTL (1 minute);
	// negative turns the cache off.
	CacheTTL time.Duration
	// CacheSize is the number of answers remembered; 0 means
	// DefaultCacheSize (4096).
	CacheSize int
}

// Introspection authenticates requests that carry an opaque access token,
// asking the authorization server about each token (RFC 7662), as a
// confidential client (client_secret_basic, RFC 6749 §2.3.1). An answer is
// accepted when it is active, has an exp in the future (a token without
// one is refused, as with JWTs: nothing would end it), names the audience
// among its aud values (MCP: the resource server must check that the
// token was issued for it), carries the issuer when one is configured and
// the answer names one, and has token_type Bearer when it has one.
//
// An endpoint that cannot be reached, that times out, or that answers
// anything but a 200 with an introspection document (its 401 to wrong
// client credentials included) is AuthUnavailable: the server answers 503
// with Retry-After and logs it, since the token may well be valid and a
// 401 would make the client discard it.
//
// Answers are cached (active ones until the earlier of exp and CacheTTL,
// inactive ones for ten seconds), and concurrent requests with the same
// token share one call to the endpoint. An Introspection is safe for
// concurrent use.
type Introspection struct {
	endpoint string
	id       string
	secret   string
	audience string
	issuer   string
	client   *http.Client
	timeout  time.Duration
	ttl      time.Duration
	cache    *tokenCache[introspected]

	mu     sync.Mutex
	flying map[string]*flight
}

// introspected is a remembered answer: a principal, or the refusal of a
// token that is inactive or fails a check.
type introspected struct {
	p   *wymcp.Principal
	err error
}

// flight is one call to the endpoint that concurrent requests share.
type flight struct {
	done chan struct{}
	p    *wymcp.Principal
	err  error
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
		timeout:  orDefault(opts.Timeout, DefaultFetchTimeout),
		ttl:      opts.CacheTTL,
		flying:   map[string]*flight{},
	}
	if in.ttl == 0 {
		in.ttl = DefaultIntrospectionCacheTTL
	}
	if in.ttl > 0 {
		in.cache = newTokenCache[introspected](opts.CacheSize)
	}
	return in, nil
}

var _ wymcp.Authenticator = (*Introspection)(nil)

// Authenticate reads the bearer token of r (see [BearerToken]) and
// introspects it (see [Introspection.Introspect]).
func (in *Introspection) Authenticate(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
	token, err := bearer(r) // Introspect checks the token's characters
	if err != nil {
		return nil, err
	}
	return in.Introspect(ctx, token)
}

var errInactive = invalid("the token is not active", nil)

// Introspect returns the principal of an active token (checking its
// syntax first, as [BearerToken] does, unless the same token was answered
// before), or a
// [*wymcp.AuthError]: AuthInvalidToken for a token the authorization
// server says is inactive or that fails a check above, AuthUnavailable
// when the endpoint could not answer. ctx bounds the call (with Timeout);
// a caller whose ctx ends stops waiting for a call it shares.
func (in *Introspection) Introspect(ctx context.Context, token string) (*wymcp.Principal, error) {
	if v, ok := in.cache.get(token, time.Now()); ok {
		return v.p, v.err
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	in.mu.Lock()
	f, shared := in.flying[token]
	if !shared {
		f = &flight{done: make(chan struct{})}
		in.flying[token] = f
		// The call runs on for every request waiting on it, so no one
		// request's end may cut it off: it has its own deadline, and its
		// own goroutine, so that the request that started it can leave.
		go func() {
			f.p, f.err = in.call(context.WithoutCancel(ctx), token)
			in.mu.Lock()
			delete(in.flying, token)
			in.mu.Unlock()
			close(f.done)
		}()
	}
	in.mu.Unlock()
	select {
	case <-f.done:
		return f.p, f.err
	case <-ctx.Done():
		return nil, unavailable(ctx.Err())
	}
}

// introspection holds the members of an RFC 7662 §2.2 answer read here.
type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope"`
	ClientID  string `json:"client_id"`
	Sub       string `json:"sub"`
	TokenType string `json:"token_type"`
	Iss       string `json:"iss"`
	Exp       *int64 `json:"exp"`
	Nbf       *int64 `json:"nbf"`
	Aud       any    `json:"aud"` // a string or an array of strings
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
	p, refusal := in.check(&ans, now)
	if refusal != nil {
		in.cache.put(token, introspected{err: refusal}, now.Add(min(inactiveTTL, in.ttl)))
		return nil, refusal
	}
	var claims map[string]any
	_ = strictjson.Unmarshal(body, &claims) // decoded above: cannot fail
	p.Claims = claims
	until := now.Add(in.ttl)
	if p.Expiry.Before(until) {
		until = p.Expiry
	}
	in.cache.put(token, introspected{p: p}, until)
	return p, nil
}

// check applies the acceptance rules to an answer. exp and nbf are
// compared with now in Unix seconds, as the integers they are: converted
// to a time.Time first, a huge nbf would wrap around to the past and pass.
func (in *Introspection) check(ans *introspection, now time.Time) (*wymcp.Principal, error) {
	// For an integer t, now < t exactly when now's whole seconds are.
	secs := now.Unix()
	switch {
	case !ans.Active:
		return nil, errInactive
	case ans.Exp == nil:
		return nil, invalid("the token has no expiry", nil)
	case secs >= *ans.Exp:
		return nil, invalid("the token has expired", nil)
	case ans.Nbf != nil && secs < *ans.Nbf:
		return nil, invalid("the token is not valid yet", nil)
	case !audienceHas(ans.Aud, in.audience):
		return nil, invalid("the token was issued for another resource", nil)
	case in.issuer != "" && ans.Iss != "" && ans.Iss != in.issuer:
		return nil, invalid("the token is from another issuer", nil)
	case ans.TokenType != "" && !strings.EqualFold(ans.TokenType, "bearer"):
		return nil, invalid("the token is not a bearer token", nil)
	}
	p := &wymcp.Principal{
		Subject:  ans.Sub,
		ClientID: ans.ClientID,
		Scopes:   scopesOf(ans.Scope),
		Expiry:   time.Unix(min(*ans.Exp, maxNumericDate), 0),
	}
	if p.Subject == "" {
		p.Subject = p.ClientID
	}
	return p, nil
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
