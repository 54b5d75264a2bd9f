// Package caller carries who made a request through its context, as the
// authentication stage established it, to the parts of the server that bind
// something to the caller (multi-round-trip state, the scoped tools/list)
// without depending on how the caller was authenticated.
package caller

import "context"

// Subject returns the caller's key (see Identity.Subject), "" when the
// request was not authenticated (auth off).
func Subject(ctx context.Context) string {
	if id := IdentityFrom(ctx); id != nil {
		return id.Subject
	}
	return ""
}

type addressKey struct{}

// WithAddress returns ctx carrying the address of the client that made
// the request (its IP address; behind a trusted proxy, the one the proxy
// forwarded for), to tell apart callers without auth.
func WithAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, addressKey{}, addr)
}

// Address returns the client's address WithAddress stored, "" when none
// was.
func Address(ctx context.Context) string {
	a, _ := ctx.Value(addressKey{}).(string)
	return a
}
