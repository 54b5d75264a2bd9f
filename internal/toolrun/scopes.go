package toolrun

import (
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/internal/caller"
)

// WithScopes implements tools.WithScopes, whose documentation it follows.
func WithScopes(scopes ...string) Option {
	return func(c *config) {
		var err error
		if c.scopes, err = addScopes(c.scopes, scopes); err != nil {
			c.errs = append(c.errs, err)
		}
	}
}

// RequireScopes implements tools.RequireScopes, whose documentation it follows.
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
