package wymcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/toolrun"
)

// Authenticator establishes who sent a request. A server with one runs it on
// every request at docs/design.md §3 stage 3: after the message is
// classified (so that a fault inside it can still be answered with the
// request's id) and before notification acceptance, the protocol fields and
// the method surface (so that nothing past the edge is revealed to an
// unknown caller). MCP 2026-07-28 is stateless: there is no session to
// remember a caller by, so every request is authenticated on its own.
//
// Authenticate returns the caller's [Principal], or an error saying why
// not: an [*AuthError] chooses the answer (401, 403, 400 or 503, see
// [AuthCode]); any other error is answered 401, with error="invalid_token"
// when the request carried an Authorization header. A nil principal with a
// nil error, or a principal with neither a Subject nor a ClientID, is
// refused as an invalid token: an authenticator must say who, since what
// binds to the caller binds to that (see [Principal.Subject]).
//
// Authenticate is called concurrently, from each request's goroutine, and
// must be safe for that. ctx is the request's context, carrying its span;
// it is done when the client goes away, and an authenticator that calls
// out (token introspection) must pass it on and return when it ends (its
// answer is then thrown away, and nothing is written). r is the request:
// its headers and URL may be read; its body has already been read by the
// server and must not be touched, and r must not be kept after returning.
// The returned Principal may be shared between requests (a verified token
// cached), so neither the authenticator nor anything downstream may modify
// it once returned.
//
// A panic inside Authenticate is contained: the request is answered
// -32603 "Internal error" with its id (HTTP 200, docs/design.md §5), the
// panic and its stack are recorded on the span and logged once at Error,
// and the server goes on serving. The one exception is a panic with
// http.ErrAbortHandler, net/http's deliberate abort of a response, which is
// let through as net/http intends.
//
// An authenticator that can be unable to check any token at all (its keys
// not fetched yet) also implements [Readier], and the server's readiness
// endpoint reports it.
//
// Ready authenticators for OAuth bearer tokens (JWT access tokens checked
// against a JWKS; opaque tokens checked by RFC 7662 introspection) are in
// package github.com/wymcp/wymcp/auth.
type Authenticator interface {
	Authenticate(ctx context.Context, r *http.Request) (*Principal, error)
}

// AuthenticatorFunc adapts a function to [Authenticator], as
// http.HandlerFunc does for http.Handler: a one-method seam is easy to
// fake in a test and to wrap, and a closure is all most fakes need.
type AuthenticatorFunc func(ctx context.Context, r *http.Request) (*Principal, error)

// Authenticate calls f(ctx, r).
func (f AuthenticatorFunc) Authenticate(ctx context.Context, r *http.Request) (*Principal, error) {
	return f(ctx, r)
}

// Principal is an authenticated caller, as an [Authenticator] established
// it. Tools read it with [PrincipalFrom]. It is read-only: one value may
// serve many requests.
type Principal struct {
	// Subject is the token's sub claim: the user (or, in a
	// client-credentials token that names one, the client) the token
	// stands for, exactly as the authorization server wrote it, and ""
	// when the token has no sub. It is never a client id filled in for a
	// missing sub: ClientID says who the caller is then.
	//
	// The span's enduser.id, when AuthOptions.RecordSubject says so, is a
	// key made of it: "sub:" and Subject when Subject is set, else
	// "client:" and ClientID. Users and clients so never share a key, and
	// a principal with neither is refused as an invalid token (401): every
	// caller is someone (docs/design.md §6). Per-caller state (a
	// multi-round-trip requestState, a gateway's exchanged token) binds to
	// that key and to ClientID.
	Subject string
	// ClientID is the OAuth client the token was issued to (its client_id,
	// else its azp), when known; "" otherwise. A principal without a
	// Subject is identified by it. A requestState minted through one
	// client does not open through another client of the same user: the
	// two hold different grants.
	ClientID string
	// Scopes are the OAuth scopes granted to the caller (RFC 6749 §3.3),
	// compared exactly (they are case-sensitive: slices.Contains). They
	// decide which tools the caller may call and see (tools.WithScopes).
	Scopes []string
	// Expiry is when the credential stops being valid; zero when unknown.
	Expiry time.Time
	// Claims are all of the token's claims, or the introspection answer's
	// members, as decoded JSON values (string, float64, bool, []any,
	// map[string]any); nil when the authenticator has none to give.
	Claims map[string]any
}

// PrincipalFrom returns the caller that the server's Authenticator
// established for the request whose context ctx is (a tool's context, in a
// typed or a raw handler alike), or nil when the server has no
// authenticator. It must not be modified.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// AuthCode is the kind of an authenticator's refusal, and so its answer
// (docs/design.md §5; RFC 6750 §3.1 names the error codes).
type AuthCode uint8

const (
	// AuthNoToken: the request carries no credential this server accepts
	// (no Authorization header, or another scheme than Bearer). 401 with a
	// challenge that has no error code (RFC 6750 §3.1: a request without
	// credentials is not an error).
	AuthNoToken AuthCode = iota + 1
	// AuthInvalidToken: a token was given and is not valid here: malformed,
	// badly signed, expired, not yet valid, for another audience or from
	// another issuer, or revoked. 401 with error="invalid_token".
	AuthInvalidToken
	// AuthInvalidRequest: the credential was sent in a way the server
	// refuses, such as a token in the query string (MCP authorization:
	// never in the URI) or two Authorization headers. 400 with
	// error="invalid_request".
	AuthInvalidRequest
	// AuthInsufficientScope: the token is valid but lacks a scope the
	// request needs. 403 with error="insufficient_scope" and, in scope,
	// the scopes every request needs (AuthOptions.RequiredScopes) and
	// those the error names; with AuthOptions.ScopeChallenge, the scopes
	// of the tool the request names too.
	AuthInsufficientScope
	// AuthUnavailable: the credential could not be checked because
	// something the authenticator depends on is down (the introspection
	// endpoint, the JWKS). 503 with Retry-After, logged: the token may
	// well be valid, and a 401 would make the client throw it away.
	AuthUnavailable
)

// name returns the RFC 6750 error code of c ("invalid_token", …),
// "no_token" for AuthNoToken and "unavailable" for AuthUnavailable, which
// have none: the word AuthError.Error names the refusal by.
func (c AuthCode) name() string {
	switch c {
	case AuthNoToken:
		return "no_token"
	case AuthInvalidToken:
		return "invalid_token"
	case AuthInvalidRequest:
		return "invalid_request"
	case AuthInsufficientScope:
		return "insufficient_scope"
	case AuthUnavailable:
		return "unavailable"
	}
	return fmt.Sprintf("AuthCode(%d)", uint8(c))
}

// AuthError is an authenticator's refusal: one error type whose Code picks
// the answer, so that every authenticator's refusals reach the client
// alike and errors.As finds them. The cause stays on the server; only
// Code, Description and Scopes shape what the client is told.
type AuthError struct {
	// Code is the kind of refusal, and so the HTTP status and challenge.
	Code AuthCode
	// Description, when set, is sent as the challenge's error_description:
	// a short fixed text for the client ("the token has expired"), never
	// token contents or server internals. Characters outside RFC 6750's
	// allowed set are dropped.
	Description string
	// Scopes, for AuthInsufficientScope, are scopes the authenticator
	// found missing; the challenge names them with the other scopes the
	// request needs (see AuthInsufficientScope).
	Scopes []string
	// Err is the cause, for errors.Is/As and the server's log (an
	// unavailable endpoint's error is logged); never sent.
	Err error
}

// Error returns the code, the description and the cause.
func (e *AuthError) Error() string {
	msg := "wymcp: auth: " + e.Code.name()
	if e.Description != "" {
		msg += ": " + e.Description
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// AuthOptions turns on authentication (docs/design.md §6). A server
// without them serves every request, as an MCP server without
// authorization does.
type AuthOptions struct {
	// Authenticator establishes the caller of every request. Required.
	Authenticator Authenticator
	// ResourceMetadata is the absolute URL of the server's RFC 9728
	// Protected Resource Metadata document, named as resource_metadata in
	// every 401, 403 and 400 challenge: MCP clients find the authorization
	// server through it (spec: the header first, then the well-known
	// URIs). Empty leaves it out of the challenges. The auth package serves
	// the document (auth.NewMetadataHandler) and computes its URL.
	ResourceMetadata string
	// RequiredScopes are needed by every request, whatever its method: a
	// caller without all of them is answered 403 insufficient_scope. They
	// are named in every challenge's scope (spec: scope lists what the
	// operation needs). Each must be an RFC 6749 §3.3 scope token.
	RequiredScopes []string
	// ScopeChallenge answers the call of a tool whose scopes the caller
	// lacks as RFC 6750 does: 403 insufficient_scope, the challenge naming
	// every scope the call needs. That tells a client which scopes to ask
	// the authorization server for (step-up authorization), at the cost of
	// telling every authenticated caller that the tool exists, and which
	// scopes guard it, though tools/list hides it from that caller.
	//
	// Off by default: such a call is answered exactly as the call of a tool
	// the server does not have (HTTP 200, -32602 "Unknown tool: <name>",
	// no challenge), so that a tool a caller may not see cannot be told
	// from one that does not exist (docs/design.md §5). The scopes every
	// request needs (RequiredScopes) are answered 403 either way: they are
	// the same whatever the request names, and tell nothing of any tool.
	ScopeChallenge bool
	// RecordSubject puts the caller's key on each request's span as
	// enduser.id: "sub:" and the principal's Subject, or "client:" and its
	// ClientID when it has no Subject (see Principal.Subject). Off by default: a subject identifies a person, and
	// traces often travel further, and live longer, than the data the
	// person agreed to share (privacy by default).
	RecordSubject bool
}

// resolve checks a and returns the authentication stage of a server
// serving set.
func (a *AuthOptions) resolve(set *toolrun.Set) (*config.Auth, *authStage, error) {
	if a.Authenticator == nil {
		return nil, nil, errors.New("wymcp: AuthOptions needs an Authenticator")
	}
	if m := a.ResourceMetadata; m != "" {
		// It goes into a quoted-string of every challenge: it must be an
		// absolute URL that cannot end the string.
		u, err := url.Parse(m)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(m, "\"\\ ") {
			return nil, nil, fmt.Errorf("wymcp: AuthOptions.ResourceMetadata %q is not an absolute http(s) URL", m)
		}
	}
	for _, s := range a.RequiredScopes {
		if !caller.ValidScope(s) {
			return nil, nil, fmt.Errorf("wymcp: AuthOptions.RequiredScopes: invalid scope %q (RFC 6749 §3.3)", s)
		}
	}
	stage := newAuthStage(a, set)
	auth := &config.Auth{Check: stage.check, RecordSubject: a.RecordSubject}
	if r, ok := a.Authenticator.(Readier); ok {
		auth.Ready = r.Ready
	}
	return auth, stage, nil
}

// Readier is implemented by an [Authenticator] that can be unable to check
// any token at all: one whose keys were never fetched (auth.JWT with a
// remote JWKS). Every request would then be answered 503, so the replica
// should not be routed to: [Server.ReadinessHandler] asks Ready on each
// probe and answers 503 while it returns an error. An authenticator that
// does not implement it is taken as always ready.
//
// Ready must be cheap and must not wait on the network (probes are frequent
// and have short timeouts): an authenticator that needs a fetch starts it
// in the background and reports not ready meanwhile. ctx is the probe's
// context.
type Readier interface {
	Ready(ctx context.Context) error
}
