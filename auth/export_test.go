package auth

import (
	"context"

	"github.com/wymcp/wymcp"
)

// The names the package's external tests (package auth_test) reach that
// the package does not export: test files only, so none is public API.

const (
	MaxTokenBytes = maxTokenBytes
	DefaultLeeway = defaultLeeway
)

// Verify is verify, the check Authenticate makes once it has the token.
func (v *JWT) Verify(ctx context.Context, token string) (*wymcp.Principal, error) {
	return v.verify(ctx, token)
}

// Introspect is introspect, the check Authenticate makes once it has the
// token.
func (in *Introspection) Introspect(ctx context.Context, token string) (*wymcp.Principal, error) {
	return in.introspect(ctx, token)
}

// Download is one download of a remote set, outside the fetch's rate
// limits and without installing what it got: the tests inspect its error.
func (k *JWKS) Download(ctx context.Context) error {
	_, err := k.download(ctx)
	return err
}
