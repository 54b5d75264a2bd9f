package actors

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
)

// maxScopedListings bounds the tools/list listings kept for distinct
// visible subsets. Callers' scope combinations are few in practice (a
// handful of roles), so a small cache holds them all; a caller population
// with more only rebuilds evicted ones. Each listing holds the encoded
// pages of the tools its subset sees.
const maxScopedListings = 64

// scopedLists answers tools/list on a server whose tools are not all
// visible to every caller (tools.WithScopes, and the rules of
// docs/design.md §11): each caller sees the tools whose scopes it was
// granted and whose rules allow it (spec: tools/list may vary by the
// request's authorization), in the set's order, marked cacheScope
// "private".
//
// What a caller sees depends only on which of the distinct scope sets the
// tools require it holds, so that is the key: one bit per distinct set.
// The pages of each subset are encoded the first time a caller with that
// subset lists, then answered as precomputed bytes, like the public list;
// cursors carry the subset in their MAC, so a cursor is valid only within
// the subset it was made for (a caller whose grants changed starts over).
type scopedLists struct {
	params listParams
	all    []*toolrun.Tool
	defs   []wire.Tool
	// reqs are the distinct scope sets the tools require; toolReq[i] is
	// the index in reqs of tool i's, -1 for a tool every caller sees.
	reqs    [][]string
	toolReq []int
	// toolRule[i] is tool i's bit among the tools with rules
	// (docs/design.md §11), -1 for a tool without; ruled counts them.
	// What a caller sees of those is its rules' verdicts, asked per
	// listing (config.Access.Visible), and they are the rest of the key.
	toolRule []int
	ruled    int

	mu    sync.RWMutex
	cache map[string]*listing
}

// newScopedLists returns nil when no tool has scopes: then one public
// listing serves every caller.
func newScopedLists(all []*toolrun.Tool, defs []wire.Tool, p listParams) *scopedLists {
	s := &scopedLists{all: all, defs: defs, toolReq: make([]int, len(all)), toolRule: make([]int, len(all)), cache: map[string]*listing{}}
	for i, t := range all {
		s.toolRule[i] = -1
		if t.HasRules() {
			s.toolRule[i] = s.ruled
			s.ruled++
		}
		need := t.Scopes()
		if len(need) == 0 {
			s.toolReq[i] = -1
			continue
		}
		slices.Sort(need)
		j := slices.IndexFunc(s.reqs, func(r []string) bool { return slices.Equal(r, need) })
		if j < 0 {
			j = len(s.reqs)
			s.reqs = append(s.reqs, need)
		}
		s.toolReq[i] = j
	}
	if len(s.reqs) == 0 && s.ruled == 0 {
		return nil
	}
	p.scope = wire.CacheScopePrivate
	s.params = p
	return s
}

// listing returns the listing of the tools the caller of ctx may see.
func (s *scopedLists) listing(ctx context.Context) *listing {
	var buf [32]byte
	key := s.subset(caller.IdentityFrom(ctx), buf[:0])
	scoped := len(key)
	key = s.allowed(ctx, key)
	s.mu.RLock()
	l := s.cache[string(key)]
	s.mu.RUnlock()
	if l != nil {
		return l
	}
	visible := make([]wire.Tool, 0, len(s.defs))
	for i, d := range s.defs {
		r, q := s.toolReq[i], s.toolRule[i]
		if (r < 0 || key[r/8]&(1<<(r%8)) != 0) && (q < 0 || key[scoped+q/8]&(1<<(q%8)) != 0) {
			visible = append(visible, d)
		}
	}
	l, err := s.params.build(visible, key)
	if err != nil {
		// Every definition was encoded when the server was built; a page
		// of them cannot fail. If it does, the containment strategy
		// answers -32603 and records why.
		panic(fmt.Errorf("encoding a scoped tools/list: %w", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.cache[string(key)]; old != nil {
		return old // built meanwhile by another request
	}
	if len(s.cache) >= maxScopedListings {
		for k := range s.cache { // evict one, arbitrarily
			delete(s.cache, k)
			break
		}
	}
	s.cache[string(key)] = l
	return l
}

// subset appends to b the caller's visible subset: bit i set when id holds
// every scope of reqs[i]. A nil id holds none.
func (s *scopedLists) subset(id *caller.Identity, b []byte) []byte {
	for range (len(s.reqs) + 7) / 8 {
		b = append(b, 0)
	}
	for i, need := range s.reqs {
		if id.Grants(need) {
			b[i/8] |= 1 << (i % 8)
		}
	}
	return b
}

// allowed appends to b, after the scope subset, the verdicts of the tools'
// rules for the caller of ctx: bit i set when the i-th tool with rules is
// allowed. A tool the caller's scopes hide is not asked about.
func (s *scopedLists) allowed(ctx context.Context, b []byte) []byte {
	if s.ruled == 0 {
		return b
	}
	scoped := len(b)
	for range (s.ruled + 7) / 8 {
		b = append(b, 0)
	}
	visible := s.params.access.Visible(ctx)
	for i, t := range s.all {
		q := s.toolRule[i]
		if q < 0 {
			continue
		}
		if r := s.toolReq[i]; r >= 0 && b[r/8]&(1<<(r%8)) == 0 {
			continue
		}
		if visible(t) {
			b[scoped+q/8] |= 1 << (q % 8)
		}
	}
	return b
}
