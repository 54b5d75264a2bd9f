package actors

import (
	"context"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// TestSetToolsReportsChange: SetTools says whether what tools/list shows,
// to anyone, changed: a set that lists alike (the same definitions and
// scopes, other handlers) is no change; another definition, another tool,
// or another scope (which changes who sees the tool) is. The listen
// streams are told only of a change (docs/design.md §5a).
func TestSetToolsReportsChange(t *testing.T) {
	nop := func(context.Context, []byte) (*protocol.CallToolResult, error) { return nil, nil }
	other := func(context.Context, []byte) (*protocol.CallToolResult, error) { return protocol.TextResult("x"), nil }
	set := func(ts ...*toolrun.Tool) *toolrun.Set {
		s, err := toolrun.NewSet(ts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := newTestSystem(t, rawTool("a", nop))
	steps := []struct {
		name string
		set  *toolrun.Set
		want bool
	}{
		{"the same tool, another handler", set(rawTool("a", other)), false},
		{"a tool added", set(rawTool("a", nop), rawTool("b", nop)), true},
		{"the same again", set(rawTool("a", nop), rawTool("b", nop)), false},
		{"a scope added", set(rawTool("a", nop), rawTool("b", nop, toolrun.WithScopes("s"))), true},
		{"another scope", set(rawTool("a", nop), rawTool("b", nop, toolrun.WithScopes("t"))), true},
		{"another description", set(rawTool("a", nop), toolrun.Must(toolrun.NewRaw("b", "Another.", []byte(`{"type":"object"}`), nop, toolrun.WithScopes("t")))), true},
		{"a tool removed", set(rawTool("a", nop)), true},
	}
	for _, st := range steps {
		changed, err := s.SetTools(st.set)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if changed != st.want {
			t.Errorf("%s: changed %v, want %v", st.name, changed, st.want)
		}
	}
}
