package toolrun

import (
	"slices"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/protocol"
)

// Guard is a rule or a limit that applies to a tool (docs/design.md §11):
// its own, its upstream's or its view's. Every rule of a tool must allow;
// every limit of a tool counts each call.
type Guard struct {
	// Rule decides whether a caller may see and call the tool; nil when
	// the guard is a limit alone.
	Rule access.Rule
	// Limit bounds the calls per caller; zero when none.
	Limit access.Limit
	// Key names the limit's place, shared by every tool it applies to
	// ("tool:" and a name, "upstream:" and a name, "view:" and a path):
	// the calls of all of them count together, per caller.
	Key string
}

// WithGuard implements tools.WithAllow and tools.WithRateLimit, whose
// documentation it follows: the guard's Key is the tool's own.
func WithGuard(rule access.Rule, limit access.Limit) Option {
	return func(c *config) {
		if err := limit.Validate(); err != nil {
			c.errs = append(c.errs, err)
			return
		}
		if rule == nil && limit.IsZero() {
			return
		}
		c.guards = append(c.guards, Guard{Rule: rule, Limit: limit})
	}
}

// Guarded returns a copy of t with the guards gs added after its own, and
// served for upstream (the access.Tool's Upstream) when upstream is not
// "". Guards with neither a rule nor a limit are dropped. t itself is
// unchanged: a tool may be served by several views, each with its own.
func Guarded(t *Tool, upstream string, gs ...Guard) *Tool {
	c := *t
	c.guards = slices.Clone(t.guards)
	for _, g := range gs {
		if g.Rule != nil || !g.Limit.IsZero() {
			c.guards = append(c.guards, g)
		}
	}
	if upstream != "" {
		c.upstream = upstream
	}
	c.seal()
	return &c
}

// seal fills in what the guards need once: each guard's Key when it has
// none (the tool's own), whether there are rules and limits, and what a
// rule sees of the tool.
func (t *Tool) seal() {
	t.hasRules, t.hasLimits = false, false
	for i := range t.guards {
		g := &t.guards[i]
		if g.Key == "" {
			g.Key = "tool:" + t.def.Name
		}
		t.hasRules = t.hasRules || g.Rule != nil
		t.hasLimits = t.hasLimits || !g.Limit.IsZero()
	}
	if len(t.guards) == 0 {
		t.info = nil
		return
	}
	t.info = &access.Tool{Name: t.def.Name, Upstream: t.upstream, Annotations: annotationMap(t.def.Annotations)}
}

// annotationMap returns the hints as a rule reads them: their JSON names,
// the hints given only.
func annotationMap(a *protocol.ToolAnnotations) map[string]any {
	m := map[string]any{}
	if a == nil {
		return m
	}
	if a.Title != "" {
		m["title"] = a.Title
	}
	for name, v := range map[string]*bool{
		"readOnlyHint": a.ReadOnlyHint, "destructiveHint": a.DestructiveHint,
		"idempotentHint": a.IdempotentHint, "openWorldHint": a.OpenWorldHint,
	} {
		if v != nil {
			m[name] = *v
		}
	}
	return m
}

// Guards returns the tool's guards, in the order they apply: its own, then
// its upstream's, then its view's. It is the tool's own slice: read only.
func (t *Tool) Guards() []Guard { return t.guards }

// HasRules reports whether a rule applies to the tool: its tools/list
// entry and its calls are decided per caller.
func (t *Tool) HasRules() bool { return t.hasRules }

// HasLimits reports whether a limit applies to the tool's calls.
func (t *Tool) HasLimits() bool { return t.hasLimits }

// Access returns the tool as a rule sees it; nil when no guard applies.
func (t *Tool) Access() *access.Tool { return t.info }
