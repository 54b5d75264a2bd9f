package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/opfile"
)

// OAuth configures a token endpoint for [ClientCredentials] and
// [TokenExchange]. The gateway authenticates to it as a confidential
// client, with HTTP Basic (client_secret_basic, RFC 6749 §2.3.1).
type OAuth struct {
	// TokenURL is the authorization server's token endpoint (http or
	// https). Required. Connect refuses plain http to a host that is not
	// loopback unless Options.AllowCleartextCredentials: the client
	// secret, and an exchange's caller token, go in every request.
	TokenURL string
	// ClientID and ClientSecret are the gateway's own client at the
	// authorization server, sent with HTTP Basic. Both are required: the
	// client-credentials grant is for confidential clients only (RFC 6749
	// §4.4), and an exchange that anyone could ask for would let anyone
	// turn a caller's token into one for the upstream.
	ClientID     string
	ClientSecret string
	// ClientSecretFile, instead of ClientSecret, names a file holding the
	// secret (the spaces and newlines around it trimmed), read once by
	// ClientCredentials or TokenExchange: a regular file of at most 64
	// KiB, read as package opfile reads (never blocking, never past the
	// bound); an empty one is refused. A rotated secret takes new
	// credentials.
	ClientSecretFile string
	// Scopes go in the scope parameter, space-joined; nil sends none (the
	// authorization server's default). Each must be an RFC 6749 §3.3
	// scope token.
	Scopes []string
	// Resource is the RFC 8707 resource parameter: the upstream's URL,
	// typically, so that the token's audience is the upstream and no
	// other server would accept it. It must be an absolute URI without a
	// fragment (RFC 8707 §2); "" sends none.
	Resource string
	// Audience is the RFC 8693 audience parameter, for an authorization
	// server that names the upstream by a logical name rather than a URL.
	// TokenExchange only (the client-credentials grant has no such
	// parameter, so ClientCredentials refuses it); "" sends none.
	Audience string
	// HTTPClient sends the token requests; nil means a client of its own
	// with a 10 s timeout that follows no redirects (a redirect would
	// carry the client's secret wherever the answer points).
	HTTPClient *http.Client
}

// Token-endpoint limits.
const (
	// maxTokenResponse bounds a token endpoint's answer: an access token
	// and a few members, not a body to buffer whatever its size.
	maxTokenResponse = 64 << 10
	// fetchTimeout bounds one token request, whatever HTTPClient's own
	// timeout: a fetch is shared by every call waiting for it.
	fetchTimeout = 10 * time.Second
	// defaultTokenLifetime is how long a token whose answer has no
	// expires_in is used (RFC 6749 §5.1 makes expires_in optional).
	defaultTokenLifetime = 5 * time.Minute
	// maxTokenLifetime caps expires_in, so that a huge value cannot
	// overflow a time.Duration.
	maxTokenLifetime = 365 * 24 * time.Hour
	// minRefreshMargin is the least time before expiry at which a token
	// is refreshed: a call that starts with it must still hold a valid
	// token when the upstream reads it.
	minRefreshMargin = 10 * time.Second
	// retryDelay is the first backoff: after a failed token request (calls
	// keep a still-valid token meanwhile, and fail at once without one),
	// and after a token dropped for an upstream's 401. It doubles with
	// each failure in a row, up to maxBackoff.
	retryDelay = time.Second
	maxBackoff = 30 * time.Second
	// maxExchangeSubjects bounds TokenExchange's cache: one token per
	// caller token.
	maxExchangeSubjects = 10000
)

// Grant and token-type URIs of RFC 8693 §3 and §2.1.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	tokenTypeJWT       = "urn:ietf:params:oauth:token-type:jwt"
	grantClientCreds   = "client_credentials"
)

// ClientCredentials authenticates the gateway with the OAuth
// client-credentials grant (RFC 6749 §4.4): one token, the gateway's, for
// every call, whoever the caller.
//
// The token is cached and refreshed before it expires: once less than
// max(10 s, a fifth of its lifetime) remains, the next call starts a new
// request and goes on with the old token, which is still valid, so no
// call waits on the token endpoint while a usable token exists. Only when
// there is none (the first call, after a refusal, after expiry) do calls
// wait, all of them on one request. A failed request starts a backoff (a
// second, doubling with each failure in a row up to 30 s): meanwhile the
// old token is used while it is valid, and a call without one gets the
// failure at once, without a request. An outage of the token endpoint
// (unreachable, HTTP 5xx or 429) holds for every key of the credentials,
// so N calls during one cost a request per interval, not N.
//
// When the upstream answers 401 the token that got it is dropped, once
// (the 401s of concurrent calls with the same token drop it once, and
// their retries share one request), so the retry gets a new one. A token
// fetched that way and refused too within the refusal backoff (a second,
// doubling likewise) is not replaced: its 401 is the call's answer, so an
// upstream that refuses every token costs a token request per interval,
// not one per call.
//
// Every request carries "Authorization: Bearer <token>". Errors say what
// failed, with the HTTP status and the RFC 6749 error code of the token
// endpoint's answer, and never contain the secret or a token.
func ClientCredentials(cfg OAuth) (Credentials, error) {
	ep, err := newEndpoint(cfg, "client credentials")
	if err != nil {
		return nil, err
	}
	if cfg.Audience != "" {
		return nil, &OptionError{of: "client credentials", Field: "Audience", Problem: "is a token-exchange parameter; use Resource"}
	}
	c := &clientCredentials{ep: ep, cache: newTokenCache(1)}
	c.form = url.Values{"grant_type": {grantClientCreds}}
	ep.addCommon(c.form)
	return c, nil
}

// TokenExchange authenticates the gateway with an RFC 8693 token exchange
// of the caller's own token: the authorization server issues a token for
// the upstream (Resource, Audience) that still names the caller, and may
// record the gateway as the actor. The caller's token itself never goes to
// the upstream, only to the token endpoint.
//
// The request is grant_type=urn:ietf:params:oauth:grant-type:token-exchange
// with subject_token (the bearer token the caller presented),
// subject_token_type and requested_token_type
// urn:ietf:params:oauth:token-type:access_token, and resource, audience
// and scope when configured; the gateway authenticates with HTTP Basic.
//
// Tokens are cached per subject token: keyed by the SHA-256 of the token
// the caller presented, with its caller key, client and scopes. Two
// clients of one user, or two tokens of one client with other scopes, so
// never share an exchanged token: each is the exchange of the caller's
// own token, with the rights the authorization server gives that token.
// They are refreshed, backed off and dropped on a 401 as
// [ClientCredentials]' one token, with one request at a time per key. The
// cache holds at most 10000 tokens; a new key past that evicts the ones
// without a valid token first, else the one closest to expiry. A call
// without an authenticated caller, or whose caller presented no bearer
// token, fails without a request to the token endpoint: such a call has
// nothing to exchange.
//
// The requests the gateway makes for itself, with no caller (Connect's
// negotiation and tools/list, a 2025-era upstream's new session, Close),
// carry a client-credentials token of the same client instead (grant_type
// client_credentials, with Resource and Scopes): the gateway lists tools
// as itself, and calls them as the caller. A forwarded call never falls
// back to it: a call without a caller's token would otherwise run with the
// gateway's own rights.
func TokenExchange(cfg OAuth) (Credentials, error) {
	ep, err := newEndpoint(cfg, "token exchange")
	if err != nil {
		return nil, err
	}
	own := cfg
	own.Audience, own.ClientSecret, own.ClientSecretFile = "", ep.cfg.ClientSecret, "" // the file is read once
	gateway, err := ClientCredentials(own)
	if err != nil {
		return nil, err
	}
	t := &tokenExchange{ep: ep, cache: newTokenCache(maxExchangeSubjects), gateway: gateway.(*clientCredentials)}
	t.form = url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
	}
	ep.addCommon(t.form)
	if cfg.Audience != "" {
		t.form.Set("audience", cfg.Audience)
	}
	return t, nil
}

// clientCredentials is ClientCredentials' Credentials.
type clientCredentials struct {
	ep    *endpoint
	form  url.Values // read-only once built
	cache *tokenCache
}

func (c *clientCredentials) apply(ctx context.Context, h http.Header) error {
	tok, err := c.cache.get(ctx, "", func(ctx context.Context) (string, time.Duration, error) {
		return c.ep.request(ctx, c.form, false)
	})
	if err != nil {
		return err
	}
	h["Authorization"] = []string{"Bearer " + tok}
	return nil
}

func (c *clientCredentials) tokenURL() string { return c.ep.url }

func (t *tokenExchange) tokenURL() string { return t.ep.url }

func (c *clientCredentials) refused(_ context.Context, sent http.Header) bool {
	return c.cache.refused("", sentToken(sent))
}

// tokenExchange is TokenExchange's Credentials.
type tokenExchange struct {
	ep    *endpoint
	form  url.Values // read-only once built; subject_token is added per request
	cache *tokenCache
	// gateway serves the gateway's own requests (ownRequest).
	gateway *clientCredentials
}

// Errors of an exchange without a caller's token.
var (
	errNoCaller      = errors.New("upstream: token exchange: the call has no authenticated caller whose token could be exchanged (the server runs without auth)")
	errNoCallerToken = errors.New("upstream: token exchange: the caller presented no bearer token to exchange")
)

func (t *tokenExchange) apply(ctx context.Context, h http.Header) error {
	if isOwn(ctx) {
		return t.gateway.apply(ctx, h)
	}
	id := caller.IdentityFrom(ctx)
	if id == nil || id.Subject == "" {
		return errNoCaller
	}
	if id.Token == "" {
		return errNoCallerToken
	}
	subjectToken := id.Token
	tok, err := t.cache.get(ctx, exchangeKey(id), func(ctx context.Context) (string, time.Duration, error) {
		form := make(url.Values, len(t.form)+1)
		for k, v := range t.form {
			form[k] = v
		}
		form["subject_token"] = []string{subjectToken}
		return t.ep.request(ctx, form, true)
	})
	if err != nil {
		return err
	}
	h["Authorization"] = []string{"Bearer " + tok}
	return nil
}

func (t *tokenExchange) refused(ctx context.Context, sent http.Header) bool {
	if isOwn(ctx) {
		return t.gateway.refused(ctx, sent)
	}
	id := caller.IdentityFrom(ctx)
	if id == nil || id.Subject == "" || id.Token == "" {
		return false // apply sent nothing: nothing else to send
	}
	return t.cache.refused(exchangeKey(id), sentToken(sent))
}

// exchangeKey is the cache key of an exchange for the caller id: the
// SHA-256 of the subject token with the caller's key, client and scopes,
// each length-prefixed. The token alone would do (its subject, client and
// scopes are its own), but naming them says what a cached token stands
// for: never a token exchanged from another client's or another scope's
// token of the same user. A hash, so that the cache holds no caller token
// and its keys are small whatever a token's size.
func exchangeKey(id *caller.Identity) string {
	h := sha256.New()
	field := func(s string) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(id.Token)
	field(id.Subject)
	field(id.Client)
	for _, sc := range id.Scopes {
		field(sc)
	}
	return string(h.Sum(nil))
}

// endpoint is a token endpoint and the gateway's client there.
type endpoint struct {
	what   string // "client credentials" or "token exchange", for errors
	url    string
	id     string // form-encoded for HTTP Basic (RFC 6749 §2.3.1)
	secret string
	cfg    OAuth
	http   *http.Client
}

// newEndpoint checks what both grants share, and reads the secret's file.
func newEndpoint(cfg OAuth, what string) (*endpoint, error) {
	fail := func(field, problem string, err error) error {
		return &OptionError{of: what, Field: field, Problem: problem, err: err}
	}
	u, err := url.Parse(cfg.TokenURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the URL itself: a mistyped value may be something else.
		return nil, fail("TokenURL", "must be an http or https URL", nil)
	}
	if u.User != nil {
		return nil, fail("TokenURL", "must not hold credentials; use ClientID and ClientSecret", nil)
	}
	if u.Fragment != "" {
		return nil, fail("TokenURL", "must not have a fragment", nil)
	}
	if cfg.ClientID == "" {
		return nil, fail("ClientID", "is required", nil)
	}
	switch {
	case cfg.ClientSecretFile != "" && cfg.ClientSecret != "":
		return nil, fail("ClientSecretFile", "give ClientSecret or ClientSecretFile, not both", nil)
	case cfg.ClientSecretFile != "":
		data, err := opfile.Read(cfg.ClientSecretFile, maxSecretFile)
		if err != nil {
			return nil, fail("ClientSecretFile", err.Error(), err)
		}
		if cfg.ClientSecret = string(bytes.TrimSpace(data)); cfg.ClientSecret == "" {
			return nil, fail("ClientSecretFile", cfg.ClientSecretFile+" is empty", nil)
		}
	case cfg.ClientSecret == "":
		return nil, fail("ClientSecret", "is required", nil)
	}
	for i, s := range cfg.Scopes {
		if !caller.ValidScope(s) {
			return nil, fail(fmt.Sprintf("Scopes[%d]", i), fmt.Sprintf("%q is not an RFC 6749 scope token", s), nil)
		}
	}
	if cfg.Resource != "" {
		r, err := url.Parse(cfg.Resource)
		if err != nil || !r.IsAbs() || r.Fragment != "" || strings.Contains(cfg.Resource, "#") {
			return nil, fail("Resource", "must be an absolute URI without a fragment (RFC 8707)", nil)
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{
			Timeout: fetchTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &endpoint{
		what:   what,
		url:    u.String(),
		id:     url.QueryEscape(cfg.ClientID),
		secret: url.QueryEscape(cfg.ClientSecret),
		cfg:    cfg,
		http:   hc,
	}, nil
}

// addCommon adds the scope and resource parameters when configured.
func (e *endpoint) addCommon(form url.Values) {
	if len(e.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(e.cfg.Scopes, " "))
	}
	if e.cfg.Resource != "" {
		form.Set("resource", e.cfg.Resource)
	}
}

// tokenResponse is the members of a token endpoint's answer that are
// read (RFC 6749 §5.1, §5.2; RFC 8693 §2.2).
type tokenResponse struct {
	AccessToken     string   `json:"access_token"`
	TokenType       string   `json:"token_type"`
	ExpiresIn       *seconds `json:"expires_in"`
	IssuedTokenType string   `json:"issued_token_type"`
	Error           string   `json:"error"`
}

// seconds is expires_in: a JSON number, or a string holding one, which
// some authorization servers send.
type seconds float64

// UnmarshalJSON reads a number or a quoted number.
func (s *seconds) UnmarshalJSON(b []byte) error {
	text := string(b)
	if unq, ok := strictjson.Unquote(b); ok {
		text = unq
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return errors.New("expires_in is not a number")
	}
	*s = seconds(f)
	return nil
}

// request asks the token endpoint for a token with form, and returns it
// with its lifetime. Its errors never hold the form (secrets, the caller's
// token) nor the answer's body.
func (e *endpoint) request(ctx context.Context, form url.Values, exchange bool) (string, time.Duration, error) {
	fail := func(format string, args ...any) (string, time.Duration, error) {
		return "", 0, fmt.Errorf("upstream: "+e.what+": token endpoint: "+format, args...)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(form.Encode()))
	if err != nil {
		return fail("%v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(e.id, e.secret)
	resp, err := e.http.Do(req)
	if err != nil {
		// A *url.Error names the URL and the cause, not the body; it is
		// wrapped, so that the gateway's answer can say "unreachable"
		// without the address.
		_, _, err = fail("%w", err)
		return "", 0, &endpointError{err: err, outage: true}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return fail("HTTP %d: reading the answer: %v", resp.StatusCode, err)
	}
	if len(body) > maxTokenResponse {
		return fail("HTTP %d: answer larger than %d KiB", resp.StatusCode, maxTokenResponse>>10)
	}
	var tr tokenResponse
	decodeErr := strictjson.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK {
		var err error
		if decodeErr == nil && validErrorCode(tr.Error) {
			_, _, err = fail("HTTP %d: %s", resp.StatusCode, tr.Error)
		} else {
			_, _, err = fail("HTTP %d", resp.StatusCode)
		}
		outage := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return "", 0, &endpointError{err: err, outage: outage}
	}
	if decodeErr != nil {
		return fail("HTTP 200 but the answer is not a token response")
	}
	if tr.AccessToken == "" {
		return fail("HTTP 200 but no access_token")
	}
	if !strings.EqualFold(tr.TokenType, "Bearer") {
		return fail("token_type %s, not Bearer", printable(tr.TokenType))
	}
	if !validHeaderValue(tr.AccessToken) || strings.Trim(tr.AccessToken, " \t") != tr.AccessToken {
		return fail("the access_token cannot be sent in a header")
	}
	if exchange && tr.IssuedTokenType != "" && tr.IssuedTokenType != tokenTypeAccess && tr.IssuedTokenType != tokenTypeJWT {
		return fail("issued_token_type %s is not an access token", printable(tr.IssuedTokenType))
	}
	lifetime := defaultTokenLifetime
	if tr.ExpiresIn != nil {
		s := float64(*tr.ExpiresIn)
		if math.IsNaN(s) || s <= 0 {
			return fail("expires_in is not positive")
		}
		lifetime = maxTokenLifetime
		if s < maxTokenLifetime.Seconds() {
			lifetime = time.Duration(s * float64(time.Second))
		}
	}
	return tr.AccessToken, lifetime, nil
}

// validErrorCode reports whether s is an RFC 6749 §5.2 error code, short
// enough to quote: anything else is left out of the message.
func validErrorCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// printable quotes a short member of the answer for an error, cut to 32
// bytes: token_type and issued_token_type, which are not secrets.
func printable(s string) string {
	if len(s) > 32 {
		s = s[:32] + "…"
	}
	return strconv.Quote(s)
}

// token is a cached access token.
type token struct {
	value     string
	expires   time.Time // not usable from then on
	refreshAt time.Time // the next call asks for a new one from then on
}

// newToken returns a token obtained at from, valid for lifetime, due for
// refresh when less than max(10 s, lifetime/5) of it remains.
func newToken(value string, from time.Time, lifetime time.Duration) token {
	margin := max(minRefreshMargin, lifetime/5)
	return token{value: value, expires: from.Add(lifetime), refreshAt: from.Add(lifetime - margin)}
}

func (t token) validAt(now time.Time) bool { return t.value != "" && now.Before(t.expires) }

// fetchFunc asks for a token, and returns it with its lifetime.
type fetchFunc func(context.Context) (string, time.Duration, error)

// tokenCache holds tokens by key (exchangeKey for an exchange, "" for
// client credentials), with one fetch at a time per key, and the backoffs
// that keep a failing token endpoint or an upstream refusing every token
// from costing a token request per call.
type tokenCache struct {
	mu    sync.Mutex
	slots map[string]*slot
	max   int
	now   func() time.Time // time.Now; tests move it
	// down is the token endpoint's outage (unreachable, HTTP 5xx or 429),
	// shared by every key: while it lasts, a key without a valid token
	// fails at once with the outage's error rather than asking.
	down backoff
}

// backoff is a run of failures and the time before which nothing is
// tried again: retryDelay after the first, doubling up to maxBackoff.
type backoff struct {
	failures int
	until    time.Time
	err      error // the last failure's
}

// fail records a failure at now.
func (b *backoff) fail(now time.Time, err error) {
	b.failures++
	b.until = now.Add(backoffDelay(b.failures))
	b.err = err
}

// active reports whether now is within the backoff.
func (b *backoff) active(now time.Time) bool { return b.failures > 0 && now.Before(b.until) }

// backoffDelay is the wait after n consecutive failures.
func backoffDelay(n int) time.Duration {
	d := retryDelay
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// slot is one key's token and its fetch in progress.
type slot struct {
	tok    token   // zero when there is none
	flight *flight // nil when no fetch is in progress
	// failed is the run of failed fetches: until it ends, a call without
	// a valid token gets the last failure at once, and a due refresh is
	// not started.
	failed backoff
	// refusals is the run of tokens dropped because the upstream
	// answered 401: within it, a 401 to a token fetched since is the
	// call's answer, not a reason to fetch yet another.
	refusals backoff
}

// flight is one fetch, which every call waiting for the key shares.
type flight struct {
	done chan struct{}
	tok  token
	err  error
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{slots: map[string]*slot{}, max: max, now: time.Now}
}

// get returns key's token: the cached one while it is valid (starting a
// refresh in the background once it is due), else the outcome of a fetch
// it starts or joins, or the last failure while the key or the endpoint
// is in backoff. fetch runs detached from ctx's cancellation, since other
// calls may share it, and bounded by fetchTimeout; a call whose ctx ends
// stops waiting.
func (c *tokenCache) get(ctx context.Context, key string, fetch fetchFunc) (string, error) {
	c.mu.Lock()
	now := c.now()
	s := c.slots[key]
	if s == nil {
		c.makeRoom(now)
		s = &slot{}
		c.slots[key] = s
	}
	if s.tok.validAt(now) {
		if !now.Before(s.tok.refreshAt) && s.flight == nil && !s.failed.active(now) && !c.down.active(now) {
			c.start(ctx, key, s, fetch)
		}
		v := s.tok.value
		c.mu.Unlock()
		return v, nil
	}
	f := s.flight
	if f == nil {
		switch {
		case s.failed.active(now):
			err := s.failed.err
			c.mu.Unlock()
			return "", err
		case c.down.active(now):
			err := c.down.err
			c.mu.Unlock()
			return "", err
		}
		f = c.start(ctx, key, s, fetch)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		if f.err != nil {
			return "", f.err
		}
		return f.tok.value, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// start runs fetch for s in a goroutine; c.mu is held.
func (c *tokenCache) start(ctx context.Context, key string, s *slot, fetch fetchFunc) *flight {
	f := &flight{done: make(chan struct{})}
	s.flight = f
	go func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
		// The lifetime counts from before the request was sent: the token
		// cannot have been issued earlier.
		sent := c.now()
		value, lifetime, err := fetch(fctx)
		cancel()
		var tok token
		if err == nil {
			tok = newToken(value, sent, lifetime)
		}
		c.mu.Lock()
		f.tok, f.err = tok, err
		now := c.now()
		if err == nil {
			c.down = backoff{}
		} else if isOutage(err) {
			c.down.fail(now, err)
		}
		// The slot may have been evicted meanwhile: then the waiting calls
		// get the token, and the cache does not.
		if c.slots[key] == s && s.flight == f {
			s.flight = nil
			if err == nil {
				s.tok, s.failed = tok, backoff{}
			} else {
				s.failed.fail(now, err)
			}
		}
		c.mu.Unlock()
		close(f.done)
	}()
	return f
}

// makeRoom evicts before a new key is added to a full cache: the slots
// without a valid token (expired, or only a failure's backoff), else the
// one closest to expiry (slots with a fetch in progress last, since calls
// wait on them). c.mu is held.
func (c *tokenCache) makeRoom(now time.Time) {
	if len(c.slots) < c.max {
		return
	}
	var victim string
	var victimSlot *slot
	for k, s := range c.slots {
		if s.flight == nil && !s.tok.validAt(now) {
			delete(c.slots, k)
			continue
		}
		if victimSlot == nil || evictBefore(s, victimSlot) {
			victim, victimSlot = k, s
		}
	}
	if len(c.slots) >= c.max && victimSlot != nil {
		delete(c.slots, victim)
	}
}

// evictBefore reports whether a goes before b: no fetch in progress first,
// then the earlier expiry.
func evictBefore(a, b *slot) bool {
	if (a.flight == nil) != (b.flight == nil) {
		return a.flight == nil
	}
	return a.tok.expires.Before(b.tok.expires)
}

// refused is an upstream's 401 to a request that carried sent, key's
// token then, and reports whether the call should be sent once more.
// Only the token that got the 401 is dropped, and only once: when
// another call's 401 already replaced it, the retry takes the new one;
// when the token was itself fetched after a 401 within the refusal
// backoff, the upstream is refusing fresh tokens too, and this 401 is the
// answer rather than a reason to ask the token endpoint again.
func (c *tokenCache) refused(key, sent string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.slots[key]
	if s == nil || sent == "" || s.tok.value != sent {
		return true
	}
	now := c.now()
	if s.refusals.active(now) {
		return false
	}
	if s.refusals.failures > 0 && now.After(s.refusals.until.Add(maxBackoff)) {
		// A token that lasted this long was accepted meanwhile: a new run.
		s.refusals = backoff{}
	}
	s.refusals.fail(now, nil)
	s.tok = token{}
	return true
}

// isOutage reports a failure of the token endpoint itself (unreachable,
// HTTP 5xx or 429), which holds for every key, as opposed to a refusal of
// one request (invalid_grant for one caller's token).
func isOutage(err error) bool {
	var ee *endpointError
	return errors.As(err, &ee) && ee.outage
}

// endpointError is a token request's failure.
type endpointError struct {
	err    error
	outage bool
}

func (e *endpointError) Error() string { return e.err.Error() }
func (e *endpointError) Unwrap() error { return e.err }

// sentToken is the bearer token of a request's header, "" for none.
func sentToken(h http.Header) string {
	v, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return v
}
