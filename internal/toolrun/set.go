package toolrun

import (
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// Set is the tool set of one server: tools with unique names, in the order
// they were given (the order of tools/list). It is fixed once built — the
// server is stateless, so no request registers a tool; Server.SetTools
// replaces the server's Set with a new one — and safe for concurrent use.
type Set struct {
	list   []*Tool
	byName map[string]*Tool
}

// NewSet returns the set of ts. A nil tool or two tools of one name fail:
// a server must not start with a tool set that cannot be served as written.
func NewSet(ts ...*Tool) (*Set, error) {
	s := &Set{list: slices.Clone(ts), byName: make(map[string]*Tool, len(ts))}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: tool %d of the set is nil", i)
		}
		if _, dup := s.byName[t.Name()]; dup {
			return nil, fmt.Errorf("tools: duplicate tool name %q", t.Name())
		}
		s.byName[t.Name()] = t
	}
	return s, nil
}

// Tools returns the tools in their order. It is a copy.
func (s *Set) Tools() []*Tool { return slices.Clone(s.list) }

// Resolve reads a tools/call params.name as sent (a JSON value) and returns
// the tool it names and the name. An unknown name returns a nil tool and the
// name decoded; ok is false for an absent or non-string name.
//
// A name without escapes — nearly every one — is looked up by its bytes,
// so resolving a known tool makes no string: the name returned is the
// tool's own.
func (s *Set) Resolve(name wire.RawJSON) (t *Tool, decoded string, ok bool) {
	if inner, ok := strictjson.PlainString(name); ok {
		if t := s.byName[string(inner)]; t != nil {
			return t, t.Name(), true
		}
	}
	if decoded, ok = strictjson.Unquote(name); !ok {
		return nil, "", false
	}
	return s.byName[decoded], decoded, true
}
