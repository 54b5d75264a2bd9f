package actors

import (
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
// visible to every caller (tools.WithScopes): each caller sees the tools
// whose scopes it was granted (spec: tools/list may vary by the request's
// authorization), in the set's order, marked cacheScope "private".
//
// What a caller sees depends only on which of the distinct scope sets the
// tools require it holds, so that is the key: one bit per distinct set.
// The pages of each subset are encoded the first time a caller with that
// subset lists, then answered as precomputed bytes, like the public list;
// cursors carry the subset in their MAC, so a cursor is valid only within
// the subset it was made for (a caller whose grants changed starts over).
type scopedLists struct {
	params listParams
	defs   []wire.Tool
	// reqs are the distinct scope sets the tools require; toolReq[i] is
	// the index in reqs of tool i's, -1 for a tool every caller sees.
	reqs    [][]string
	toolReq []int

	mu    sync.RWMutex
	cache map[string]*listing
}

// newScopedLists returns nil when no tool has scopes: then one public
// listing serves every caller.
func newScopedLists(all []*toolrun.Tool, defs []wire.Tool, p listParams) *scopedLists {
	s := &scopedLists{defs: defs, toolReq: make([]int, len(all)), cache: map[string]*listing{}}
	for i, t := range all {
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
	if len(s.reqs) == 0 {
		return nil
	}
	p.scope = wire.CacheScopePrivate
	s.params = p
	return s
}

// listing returns the listing of the tools id may see.
func (s *scopedLists) listing(id *caller.Identity) *listing {
	var buf [32]byte
	key := s.subset(id, buf[:0])
	s.mu.RLock()
	l := s.cache[string(key)]
	s.mu.RUnlock()
	if l != nil {
		return l
	}
	visible := make([]wire.Tool, 0, len(s.defs))
	for i, d := range s.defs {
		if r := s.toolReq[i]; r < 0 || key[r/8]&(1<<(r%8)) != 0 {
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
