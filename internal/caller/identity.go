package caller

import (
	"context"
	"time"
)

// Identity is the caller as the authentication stage established it: what
// the server itself reads, the caller's key and the scopes granted to it,
// to decide what the caller may call and see and what binds to it. The
// facade keeps its own Principal beside it (wymcp.PrincipalFrom). It is
// read-only once stored.
type Identity struct {
	// Subject is the caller's key: "sub:" and a token's subject, or
	// "client:" and its client when it has no subject (wymcp.Principal.Subject).
	// Never empty for an authenticated caller.
	Subject string
	// Client is the OAuth client the token was issued to
	// (wymcp.Principal.ClientID), "" when unknown. What binds to the
	// caller binds to it too (a requestState, an exchanged token): two
	// clients of one user hold different grants, and one must not act
	// with what the other was given (docs/auth.md).
	Client string
	// Scopes are the OAuth scopes granted to the caller.
	Scopes []string
	// Token is the bearer token the request presented, "" when it
	// presented none (an authenticator that reads another credential). It
	// is the subject token of an RFC 8693 exchange for an upstream
	// (package upstream); it is never sent anywhere as it is.
	Token string
	// Expiry is when the credential stops being valid
	// (wymcp.Principal.Expiry); zero when unknown. A listen stream ends
	// at it (docs/design.md §5a).
	Expiry time.Time
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the caller's identity, nil when the request was not
// authenticated (auth off).
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// Grants reports whether every scope in need was granted to the caller. A
// nil identity (auth off) grants nothing but the empty need. Scopes are
// compared exactly (RFC 6749 §3.3: case-sensitive); the lists are a
// handful of items, so two loops beat building a set per request.
func (id *Identity) Grants(need []string) bool {
	if len(need) == 0 {
		return true
	}
	if id == nil {
		return false
	}
outer:
	for _, n := range need {
		for _, s := range id.Scopes {
			if s == n {
				continue outer
			}
		}
		return false
	}
	return true
}

// ValidScope reports whether s is a scope token as RFC 6749 §3.3 defines
// it: one or more printable ASCII characters other than space, '"' and
// '\'. A scope outside that syntax could not be named in a scope list or a
// WWW-Authenticate challenge without breaking either.
func ValidScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
