// Package caller carries who made a request through its context, as the
// authentication stage established it, to the parts of the server that bind
// something to the caller (multi-round-trip state) without depending on
// how the caller was authenticated.
package caller

import "context"

type subjectKey struct{}

// WithSubject returns ctx carrying the authenticated caller's key
// (Identity.Subject: "sub:…" or "client:…", never empty for an
// authenticated caller). An empty subject is not stored.
func WithSubject(ctx context.Context, subject string) context.Context {
	if subject == "" {
		return ctx
	}
	return context.WithValue(ctx, subjectKey{}, subject)
}

// Subject returns the caller's key (see Identity.Subject), "" when the
// request was not authenticated (auth off).
func Subject(ctx context.Context) string {
	s, _ := ctx.Value(subjectKey{}).(string)
	return s
}
