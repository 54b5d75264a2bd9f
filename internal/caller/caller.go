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
