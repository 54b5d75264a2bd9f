package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/policy"
)

// The -upstreams file's policy keys (docs/design.md §11): allow and
// rateLimit, on an entry of servers:, of upstreams: and of
// upstreams[].overrides. What they mean is package access's and package
// policy's; this file reads them.

// Guard is a view's, an upstream's or a tool's rule and rate limit
// (docs/design.md §11).
type Guard struct {
	Allow     *rule      `yaml:"allow"`
	RateLimit *rateLimit `yaml:"rateLimit"`
}

// rule is an allow key: one CEL expression (package policy), compiled and
// type-checked as the file is read, so that a bad one is an error at its
// line, at start or on a reload (which then changes nothing).
type rule struct{ compiled *policy.Rule }

func (r *rule) UnmarshalYAML(n ast.Node) error {
	s, ok := n.(*ast.StringNode)
	if l, folded := n.(*ast.LiteralNode); folded { // | and >: a long rule on lines of its own
		s, ok = l.Value, l.Value != nil
	}
	if !ok {
		return errorAt(n, "want a CEL expression, as a string")
	}
	c, err := policy.Compile(s.Value)
	if err != nil {
		return errorAt(n, "not a valid rule: "+err.Error())
	}
	r.compiled = c
	return nil
}

// MarshalJSON is the rule's text, which fingerprint compares.
func (r *rule) MarshalJSON() ([]byte, error) { return json.Marshal(r.compiled.String()) }

// rule is the access.Rule of the key, nil without one.
func (r *rule) rule() access.Rule {
	if r == nil {
		return nil
	}
	return r.compiled
}

// rateLimit is a rateLimit key: calls per interval, per caller.
type rateLimit struct {
	Calls count    `yaml:"calls"`
	Per   duration `yaml:"per"`
}

// limit is the access.Limit of the key, zero without one.
func (l *rateLimit) limit() access.Limit {
	if l == nil {
		return access.Limit{}
	}
	return access.Limit{Calls: int(l.Calls), Per: time.Duration(l.Per)}
}

// check refuses a rateLimit without its calls or a positive interval.
func (g Guard) check() (key, msg string) {
	switch l := g.RateLimit; {
	case l == nil:
	case l.Calls == 0:
		return "rateLimit.calls", "missing: write rateLimit: {calls: N, per: DURATION}"
	case l.Per <= 0:
		return "rateLimit.per", "missing or 0: write rateLimit: {calls: N, per: DURATION}, such as per: 1m"
	}
	return "", ""
}

// validGuards refuses an allow or a rateLimit key of cfg written without
// a value (allow: and nothing after it, or ~): read as no key, it would
// allow every caller where the operator meant to restrict them. Past
// that, it is cfg.validated().
func validGuards(cfg *upstreamsConfig) (*upstreamsConfig, error) {
	for i, e := range cfg.upstreams {
		at := fmt.Sprintf("upstreams[%d]", i)
		if err := cfg.nullGuard(e.Guard, at); err != nil {
			return nil, err
		}
		for _, name := range slices.Sorted(maps.Keys(e.Overrides)) {
			if ov := e.Overrides[name]; ov != nil {
				if err := cfg.nullGuard(ov.Guard, at+"."+keyChild("overrides", name)); err != nil {
					return nil, err
				}
			}
		}
	}
	for i, s := range cfg.servers {
		if err := cfg.nullGuard(s.Guard, fmt.Sprintf("servers[%d]", i)); err != nil {
			return nil, err
		}
	}
	return cfg.validated()
}

// nullGuard refuses g's keys present under at without a value.
func (c *upstreamsConfig) nullGuard(g Guard, at string) error {
	if _, ok := c.lines[at+".allow"]; ok && g.Allow == nil {
		return c.at(at+".allow", "want a CEL expression, got null (a rule left empty would allow every caller)")
	}
	if _, ok := c.lines[at+".rateLimit"]; ok && g.RateLimit == nil {
		return c.at(at+".rateLimit", "want a mapping, got null: write rateLimit: {calls: N, per: DURATION}")
	}
	return nil
}
