package gateway

import (
	"fmt"
	"slices"

	"github.com/wymcp/wymcp/tools"
)

// The conflict rule (docs/design.md §10c): the served tools are the local
// tools, then each connected upstream's, in the order of the upstreams;
// a tool whose served name an earlier one has taken is left out. A
// conflict is an operator's fact to fix (a prefix, an exclude, an
// override), not a reason to stop serving: it costs the later tool alone,
// and every other change is still served. A pending upstream keeps its
// place: once connected, its tools win over a later upstream's, which are
// left out from then on.

// conflict is one tool left out: its served name, the upstream whose tool
// it is, and the owner of the name ("" for the local tools).
type conflict struct{ tool, upstream, owner string }

// compose returns the served tools of ups, and the ones left out.
func (g *Gateway) compose(ups []*live) (ts []*tools.Tool, left []conflict) {
	ts = slices.Clone(g.own)
	by := make(map[string]string, len(ts))
	for _, t := range g.own {
		by[t.Name()] = ""
	}
	for _, l := range ups {
		if l.u == nil {
			continue // pending
		}
		for _, t := range l.u.Tools() {
			if owner, taken := by[t.Name()]; taken {
				left = append(left, conflict{tool: t.Name(), upstream: l.o.Name, owner: owner})
				continue
			}
			by[t.Name()] = l.o.Name
			ts = append(ts, t)
		}
	}
	return ts, left
}

// publish serves the tools of ups through every view, each picking its
// own by its selection (sels: one per view); g.mu is held. A view whose tools are
// the same keeps its set (and its clients' cursors). It applies whole or
// not at all: if a view refuses its new set, the views already changed
// get their old one back, and the error names the view.
func (g *Gateway) publish(ups []*live, sels []selection) error {
	ts, left := g.compose(ups)
	sets := make([][]*tools.Tool, len(g.views))
	made := make([]map[*tools.Tool]*tools.Tool, len(g.views))
	var changed []*view
	for i, v := range g.views {
		sets[i], made[i] = pick(ts, sels[i], v.path, v.guarded, v.sel.sameGuard(sels[i]))
		if slices.Equal(sets[i], v.tools) {
			continue
		}
		if err := v.srv.SetTools(sets[i]...); err != nil {
			for _, w := range changed {
				_ = w.srv.SetTools(w.tools...) // served before, so valid
			}
			if v.path != "" {
				err = fmt.Errorf("view %s: %w", v.path, err)
			}
			return err
		}
		changed = append(changed, v)
	}
	for i, v := range g.views {
		v.tools, v.sel, v.guarded = sets[i], sels[i], made[i]
	}
	g.serving = len(ts)
	g.noteConflicts(left)
	g.applyTTL(ups)
	return nil
}

// selections are the views' selections now; g.mu is held.
func (g *Gateway) selections() []selection {
	ps := make([]selection, len(g.views))
	for i, v := range g.views {
		ps[i] = v.sel
	}
	return ps
}

// noteConflicts logs each conflict that is new since the last set was
// served, once (not per call, nor per refresh that changes nothing), and
// keeps them for the metric; g.mu is held.
func (g *Gateway) noteConflicts(left []conflict) {
	now := make(map[conflict]bool, len(left))
	for _, c := range left {
		now[c] = true
		if g.leftOut[c] {
			continue
		}
		owner := "the local tools"
		if c.owner != "" {
			owner = "upstream " + c.owner
		}
		g.logger.Warn("tool left out: its name is served already; give one of them a prefix, exclude or rename it",
			"tool", c.tool, "upstream", c.upstream, "served_by", owner)
	}
	g.leftOut = now
}
