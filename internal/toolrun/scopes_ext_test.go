package toolrun_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
)

// TestScopes: WithScopes keeps each scope once, in order; Scopes is a copy;
// RequireScopes adds to a copy and leaves the tool as it was
// (docs/design.md §6: tools may require scopes).
func TestScopes(t *testing.T) {
	t.Parallel()
	tool := toolrun.Must(toolrun.New("files", "Reads files.", echo, toolrun.WithScopes("files:read", "files:read", "files:list")))
	if got := tool.Scopes(); !slices.Equal(got, []string{"files:read", "files:list"}) {
		t.Errorf("Scopes() = %q", got)
	}
	tool.Scopes()[0] = "changed"
	if tool.Scopes()[0] != "files:read" {
		t.Error("Scopes() is not a copy")
	}
	more, err := toolrun.RequireScopes(tool, "files:list", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if got := more.Scopes(); !slices.Equal(got, []string{"files:read", "files:list", "admin"}) {
		t.Errorf("RequireScopes: %q", got)
	}
	if got := tool.Scopes(); !slices.Equal(got, []string{"files:read", "files:list"}) {
		t.Errorf("RequireScopes changed the original: %q", got)
	}
	if more.Name() != "files" || more.Definition().Description != "Reads files." {
		t.Errorf("RequireScopes lost the definition: %+v", more.Definition())
	}
	if toolrun.Must(toolrun.New("plain", "d", echo)).Scopes() != nil {
		t.Error("a tool without WithScopes has scopes")
	}
}

// TestScopesRefused: a scope outside RFC 6749 §3.3's syntax (empty, with a
// space, a quote, a backslash, non-ASCII) fails construction: it could not
// be named in a challenge.
func TestScopesRefused(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "a b", `a"b`, `a\b`, "ünï", "tab\there"} {
		if _, err := toolrun.New("t", "d", echo, toolrun.WithScopes("ok", bad)); err == nil || !strings.Contains(err.Error(), "invalid scope") {
			t.Errorf("WithScopes(%q): err %v", bad, err)
		}
		if _, err := toolrun.RequireScopes(toolrun.Must(toolrun.New("t", "d", echo)), bad); err == nil {
			t.Errorf("RequireScopes(%q) succeeded", bad)
		}
	}
	if _, err := toolrun.RequireScopes(nil, "a"); err == nil {
		t.Error("RequireScopes(nil) succeeded")
	}
}
