package tools

import (
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/internal/caller"
)

// WithScopes names the OAuth scopes a caller needs, all of them, to call
// the tool and to see it in tools/list (docs/design.md §6). A tools/call
// from a caller without them is answered 403 insufficient_scope naming
// every scope the call needs, before the tool runs; tools/list leaves
// the tool out of that caller's pages, which are then marked cacheScope
// "private" (spec: tools/list may vary by the request's authorization).
//
// Each scope must be an RFC 6749 §3.3 scope token (printable ASCII without
// space, '"' or '\'), or [New] fails. Repeated scopes are kept once. A
// server with a scoped tool needs an authenticator: wymcp.New refuses the
// tool set otherwise, since without one no caller could be granted a scope
// and the tool would be unreachable.
func WithScopes(scopes ...string) Option {
	return func(c *config) {
		var err error
		if c.scopes, err = addScopes(c.scopes, scopes); err != nil {
			c.errs = append(c.errs, err)
		}
	}
}

// RequireScopes returns a copy of t that also requires scopes, as if t had
// been built with [WithScopes] naming them too. It is for a deployment that
// decides a tool set's access policy apart from the tools' code, as
// cmd/wymcp's -auth-scope flag does; a tool whose code knows its scopes
// takes WithScopes. t is unchanged.
func RequireScopes(t *Tool, scopes ...string) (*Tool, error) {
	if t == nil {
		return nil, fmt.Errorf("tools: RequireScopes of a nil tool")
	}
	merged, err := addScopes(slices.Clone(t.scopes), scopes)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: %w", t.def.Name, err)
	}
	c := *t
	c.scopes = merged
	return &c, nil
}

// Scopes returns the scopes a caller needs to call the tool (see
// [WithScopes]); nil when it needs none. It is a copy.
func (t *Tool) Scopes() []string { return slices.Clone(t.scopes) }

// addScopes appends the scopes not yet in have, checking each.
func addScopes(have, scopes []string) ([]string, error) {
	for _, s := range scopes {
		if !caller.ValidScope(s) {
			return have, fmt.Errorf("invalid scope %q: a scope is printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", s)
		}
		if !slices.Contains(have, s) {
			have = append(have, s)
		}
	}
	return have, nil
}
