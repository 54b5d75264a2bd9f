package wymcp

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// The authentication stage's decisions (docs/design.md §3 stage 3, §5): the
// embedder's Authenticator, then the scopes the request needs, and the
// answer to every refusal. The facade owns them because it owns the types
// they are made of (Principal, AuthError, AuthCode); the transport runs the
// stage, contains a panic inside it and writes what it decides.

// authRetryAfterSeconds is the Retry-After of a 503 for a credential that
// could not be checked: an authorization server that is down is rarely
// back within the second an overloaded server asks for.
const authRetryAfterSeconds = "5"

var (
	errUnauthorized = wire.Errorf(wire.CodeInvalidRequest, "Unauthorized: a valid bearer token is required (see WWW-Authenticate)")
	errForbidden    = wire.Errorf(wire.CodeInvalidRequest, "Forbidden: the token lacks a scope this request needs (see WWW-Authenticate)")
	errAuthRequest  = wire.Errorf(wire.CodeInvalidRequest, "Bad Request: the credential was not sent as this server accepts it (see WWW-Authenticate)")
	errAuthDown     = wire.Errorf(wire.CodeInternalError, "Service unavailable: the token cannot be checked now; retry later")
)

// authStage is the stage as New builds it from AuthOptions: everything it
// compares against is made once.
type authStage struct {
	authn    Authenticator
	metadata string   // resource_metadata for the challenges; "" for none
	required []string // needed by every request
	// reveal answers a call of a tool whose scopes the caller lacks 403
	// naming them (AuthOptions.ScopeChallenge); without it the call is
	// answered as one of a tool the server does not have.
	reveal bool
	// needs holds, for each tool of the current set that has scopes of its
	// own, every scope a call of it needs: the required ones and the
	// tool's. Server.SetTools replaces it (setTools).
	needs atomic.Pointer[map[*toolrun.Tool][]string]
}

func newAuthStage(a *AuthOptions, set *toolrun.Set) *authStage {
	s := &authStage{
		authn:    a.Authenticator,
		metadata: a.ResourceMetadata,
		required: slices.Clone(a.RequiredScopes),
		reveal:   a.ScopeChallenge,
	}
	s.setTools(set)
	return s
}

// setTools makes the needs of set's tools the ones looked up.
func (s *authStage) setTools(set *toolrun.Set) {
	needs := map[*toolrun.Tool][]string{}
	for _, t := range set.Tools() {
		if scopes := t.Scopes(); len(scopes) > 0 {
			needs[t] = union(s.required, scopes)
		}
	}
	s.needs.Store(&needs)
}

// need returns every scope a request needs: the required ones, and a
// scoped tool's when it calls one. A tool of a set just replaced, which a
// request resolved before the swap, still needs its scopes.
func (s *authStage) need(tool *toolrun.Tool) []string {
	if n, ok := (*s.needs.Load())[tool]; ok {
		return n
	}
	if tool != nil {
		if scopes := tool.Scopes(); len(scopes) > 0 {
			return union(s.required, scopes)
		}
	}
	return s.required
}

// principalKey is the context key of the request's *Principal
// (PrincipalFrom).
type principalKey struct{}

// check is config.Auth.Check: it authenticates r, a request naming tool
// (nil when it names none), and returns ctx carrying the caller, or the
// answer that refuses it.
func (s *authStage) check(ctx context.Context, r *http.Request, tool *toolrun.Tool) (context.Context, *config.AuthAnswer) {
	p, err := s.authn.Authenticate(ctx, r)
	if err != nil {
		return ctx, s.refuse(err, r, tool)
	}
	if p == nil {
		return ctx, s.invalidToken("") // an authenticator must say who
	}
	key := bindingKey(p)
	if key == "" {
		return ctx, s.invalidToken("") // a principal that names neither would bind as nobody
	}
	if expiredListen(r, p) {
		return ctx, s.invalidToken("the token has expired")
	}
	id := &caller.Identity{Subject: key, Client: p.ClientID, Scopes: p.Scopes, Token: bearer(r), Expiry: p.Expiry}
	if need := s.need(tool); !id.Grants(need) {
		return s.lacking(ctx, p, id, need)
	}
	return withCaller(ctx, p, id), nil
}

// expiredListen reports whether r is a subscriptions/listen whose
// credential's expiry has passed, though the authenticator accepted it
// (auth.JWT's leeway for clock skew). A stream ends at its credential's
// expiry (docs/design.md §5a): this one would be acknowledged and ended at
// once, and a client listening again with the token it has would loop, a
// stream a round trip, until the leeway ran out. Refused 401, it gets a
// fresh token first. The Mcp-Method header names the method here: stage 5
// refuses a request whose header and body disagree.
func expiredListen(r *http.Request, p *Principal) bool {
	m := r.Header["Mcp-Method"]
	return len(m) == 1 && m[0] == wire.MethodListen && !p.Expiry.IsZero() && !time.Now().Before(p.Expiry)
}

// withCaller returns ctx carrying the authenticated caller: its identity
// for what binds to it or filters by scope, and the principal for tools.
func withCaller(ctx context.Context, p *Principal, id *caller.Identity) context.Context {
	return context.WithValue(caller.WithIdentity(ctx, id), principalKey{}, p)
}

// lacking is the verdict on a caller without every scope need holds (the
// scopes of the request, and of the tool it names). A caller without the
// ones every request needs is refused 403 naming them; one that lacks
// only the tool's is refused 403 naming them all when the server reveals
// tools' scopes (AuthOptions.ScopeChallenge), and otherwise goes on, as
// itself, as a call of a tool the server does not have.
func (s *authStage) lacking(ctx context.Context, p *Principal, id *caller.Identity, need []string) (context.Context, *config.AuthAnswer) {
	switch {
	case s.reveal:
		return ctx, s.forbidden(need, "", nil)
	case !id.Grants(s.required):
		return ctx, s.forbidden(s.required, "", nil)
	}
	return withCaller(ctx, p, id), hidden
}

// hidden is the verdict on a call of a tool the caller may not see, when
// the server hides such tools rather than challenge (the default,
// AuthOptions.ScopeChallenge): the call goes on as one of a tool the
// server does not have, and is answered as that, whatever else it sends
// (headers, arguments, capabilities), byte for byte but for the name it
// echoes. A 403 would name the tool's scopes, and so tell the caller that
// the tool exists though its tools/list leaves it out (docs/design.md §5).
// It is shared by every such call, and read only.
var hidden = &config.AuthAnswer{Hide: true, Kind: "insufficient_scope"}

// scopesOf returns the scopes a refusal's challenge may name for a request
// naming tool: every scope it needs when the server reveals tools' scopes,
// else those every request needs, which are the same whatever it names.
func (s *authStage) scopesOf(tool *toolrun.Tool) []string {
	if s.reveal {
		return s.need(tool)
	}
	return s.required
}

// bearer returns the request's bearer token, "" when its Authorization
// header is not one (RFC 6750 §2.1; the scheme is case-insensitive).
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// bindingKey returns the caller's key (caller.Identity.Subject): "sub:"
// and the principal's subject, or "client:" and its client id when it has
// no subject, so that a user and a client of the same name never share
// one; "" when it names neither, which is refused. It is made here and
// nowhere else (docs/design.md §6). What binds to the caller binds to it
// and to the client (caller.Identity.Client), so that two clients of one
// user do not share a requestState or an exchanged token.
func bindingKey(p *Principal) string {
	switch {
	case p.Subject != "":
		return "sub:" + p.Subject
	case p.ClientID != "":
		return "client:" + p.ClientID
	}
	return ""
}

// refuse is the answer to an authenticator's error: an *AuthError's Code
// picks it; any other error is a missing token, or an invalid one when
// the request carried an Authorization header.
//
// Only a caller the authenticator accepted may learn the scopes of the tool
// it names, from a 403, and only when the server reveals them
// (AuthOptions.ScopeChallenge). The challenges of a request refused before
// that (401, 400) name the scopes every request needs and nothing else,
// whatever tool the request names: otherwise an unauthenticated caller
// could tell which tools exist, and which are scoped, from the challenge
// alone. So do the 403s of a server that hides its tools.
func (s *authStage) refuse(err error, r *http.Request, tool *toolrun.Tool) *config.AuthAnswer {
	var ae *AuthError
	if !errors.As(err, &ae) {
		if len(r.Header.Values("Authorization")) > 0 {
			return s.invalidToken("")
		}
		return s.noToken()
	}
	switch ae.Code {
	case AuthNoToken:
		return s.noToken()
	case AuthInvalidRequest:
		return &config.AuthAnswer{Status: http.StatusBadRequest, Err: errAuthRequest, Kind: "invalid_request",
			Header: map[string]string{"WWW-Authenticate": s.challenge("invalid_request", ae.Description, s.required)}}
	case AuthInsufficientScope:
		return s.forbidden(s.scopesOf(tool), ae.Description, ae.Scopes)
	case AuthUnavailable:
		return &config.AuthAnswer{Status: http.StatusServiceUnavailable, Err: errAuthDown, Kind: "unavailable",
			Header: map[string]string{"Retry-After": authRetryAfterSeconds}, Unavailable: err}
	default:
		// AuthInvalidToken, and a code this version does not know: refuse.
		return s.invalidToken(ae.Description)
	}
}

// noToken is the 401 of a request without a credential: a challenge
// without an error code (RFC 6750 §3.1: a request without credentials is
// not an error).
func (s *authStage) noToken() *config.AuthAnswer {
	return &config.AuthAnswer{Status: http.StatusUnauthorized, Err: errUnauthorized, Kind: "no_token",
		Header: map[string]string{"WWW-Authenticate": s.challenge("", "", s.required)}}
}

// invalidToken is the 401 of a credential that is not valid here.
func (s *authStage) invalidToken(desc string) *config.AuthAnswer {
	return &config.AuthAnswer{Status: http.StatusUnauthorized, Err: errUnauthorized, Kind: "invalid_token",
		Header: map[string]string{"WWW-Authenticate": s.challenge("invalid_token", desc, s.required)}}
}

// forbidden is the 403 of a valid token without every scope the request
// needs. The challenge names them all at once (spec: emit every required
// scope in one challenge, so a client asks for them in one step), with any
// the authenticator itself found missing.
func (s *authStage) forbidden(need []string, desc string, missing []string) *config.AuthAnswer {
	return &config.AuthAnswer{Status: http.StatusForbidden, Err: errForbidden, Kind: "insufficient_scope",
		Header: map[string]string{"WWW-Authenticate": s.challenge("insufficient_scope", desc, union(need, missing))}}
}

// challenge builds a Bearer challenge (RFC 6750 §3; MCP authorization):
// error and error_description when given, then resource_metadata (RFC 9728
// §5.1) and scope when there are any. Parameter values are quoted strings;
// the description is cut to RFC 6750's allowed characters, and scopes and
// the metadata URL were checked when the server was built.
func (s *authStage) challenge(code, desc string, scopes []string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(key, value string) {
		b.WriteString(sep)
		b.WriteString(key)
		b.WriteString(`="`)
		b.WriteString(value)
		b.WriteByte('"')
		sep = ", "
	}
	if code != "" {
		param("error", code)
	}
	if desc = cleanDescription(desc); desc != "" {
		param("error_description", desc)
	}
	if s.metadata != "" {
		param("resource_metadata", s.metadata)
	}
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	return b.String()
}

// maxDescription bounds an error_description: a hint, not a document.
const maxDescription = 200

// cleanDescription keeps the characters RFC 6750 §3 allows in
// error_description (%x20-21 / %x23-5B / %x5D-7E), so that an
// authenticator's text can neither end the quoted string nor smuggle a
// header line.
func cleanDescription(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			ok = false
			break
		}
	}
	if !ok {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if c := s[i]; c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
				b.WriteByte(c)
			}
		}
		s = b.String()
	}
	if len(s) > maxDescription {
		s = s[:maxDescription]
	}
	return s
}

// union returns a followed by the members of b not in a (a new slice).
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
