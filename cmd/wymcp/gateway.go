package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The binary serves through a gateway.Gateway (package gateway has the
// rules: the conflict rule, pending upstreams, reloads): the -tools set,
// then the -upstreams file's upstreams in its order, on the file's
// servers: views, or on -path alone. Without -upstreams it is a gateway of
// no upstream. What is left here is the glue: the file's entries as
// options, the views with their auth, and SIGHUP.

// views are the endpoints served: the file's servers:, or, without them,
// one at -path serving every tool (its gateway.View's Path is "": the mux
// mounts it at -path).
func (c *config) views() []*serverEntry {
	if c.upstreams != nil && len(c.upstreams.servers) > 0 {
		return c.upstreams.servers
	}
	return []*serverEntry{{Path: c.path}}
}

// curated reports whether the file names servers:.
func (c *config) curated() bool { return c.upstreams != nil && len(c.upstreams.servers) > 0 }

// upstreamOptions are the file's upstreams as the gateway takes them.
func upstreamOptions(cfg *upstreamsConfig) []upstream.Options {
	if cfg == nil {
		return nil
	}
	out := make([]upstream.Options, len(cfg.upstreams))
	for i, e := range cfg.upstreams {
		out[i] = e.options()
	}
	return out
}

// gatewayViews are the file's servers: as the gateway takes them (nil
// without them); auth, per view, is added by the caller.
func gatewayViews(cfg *upstreamsConfig) []gateway.View {
	if cfg == nil || len(cfg.servers) == 0 {
		return nil
	}
	out := make([]gateway.View, len(cfg.servers))
	for i, s := range cfg.servers {
		out[i] = gateway.View{Path: s.Path, Tools: s.Tools, Name: s.Name, Allow: s.Allow.rule(), RateLimit: s.RateLimit.limit()}
	}
	return out
}

// viewAuth makes each view its own protected resource (docs/auth.md): its
// audience, its metadata document, and -auth-required-scope plus its
// scopes. It sets opts' views' Auth (or opts.Server.Auth for the one
// endpoint of -path) and returns the metadata documents, in the views'
// order. base is the server's scheme and host.
func (c *config) viewAuth(ctx context.Context, opts *gateway.Options, ts []*tools.Tool, base string, logger *slog.Logger) ([]*authMount, error) {
	k, err := c.auth.keys(logger)
	if err != nil {
		return nil, err
	}
	var mounts []*authMount
	for i, v := range c.views() {
		required := slices.Concat(c.auth.required, v.Scopes)
		sa, err := c.auth.resource(k, c.auth.resourceURI(base, v.Path, c.curated()), required, scopesOf(ts, v.Tools, opts.Upstreams), logger)
		if err != nil {
			return nil, err
		}
		if c.curated() {
			opts.Views[i].Auth = sa.options
		} else {
			opts.Server.Auth = sa.options
		}
		mounts = append(mounts, &authMount{metadata: sa.metadata, onlyFirst: c.curated()})
	}
	k.fetch(ctx)
	return mounts, nil
}

// authMount is a view's metadata document, and whether only its
// path-inserted URI is mounted: a host serving several protected
// resources leaves the root one unmounted (auth.MetadataHandler.Routes).
type authMount struct {
	metadata  *auth.MetadataHandler
	onlyFirst bool
}

// scopesOf are the scopes a view's metadata lists besides the required
// ones: those of the local tools its patterns pick, and every scope the
// upstreams' options name (their tools' served names are known only once
// they connect).
func scopesOf(ts []*tools.Tool, patterns []string, ups []upstream.Options) []string {
	var out []string
	add := func(ss []string) {
		for _, s := range ss {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	for _, t := range ts {
		if picked(t.Name(), patterns) {
			add(t.Scopes())
		}
	}
	for _, o := range ups {
		add(o.Scopes)
		for _, name := range slices.Sorted(maps.Keys(o.ToolScopes)) {
			add(o.ToolScopes[name])
		}
	}
	return out
}

// picked reports whether a view's patterns pick name (none picks all).
func picked(name string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// exactPattern is the ServeMux pattern of exactly p: a view answers on
// its path alone, as the Gateway's own routing does.
func exactPattern(p string) string {
	if strings.HasSuffix(p, "/") {
		return p + "{$}"
	}
	return p
}

// reloader applies the file again on SIGHUP.
type reloader struct {
	g      *gateway.Gateway
	file   string
	authOn bool
	logger *slog.Logger
	// served are the fingerprints of the entries served, by name: what a
	// reload compares (upstreamEntry.fingerprint).
	served map[string]string
	// servers are the file's servers: at start, whose paths, names and
	// scopes a reload cannot change (sameServers).
	servers []*serverEntry
}

func newReloader(g *gateway.Gateway, cfg *upstreamsConfig, authOn bool, logger *slog.Logger) *reloader {
	return &reloader{g: g, file: cfg.file, authOn: authOn, logger: logger, served: fingerprints(cfg), servers: cfg.servers}
}

// sameServers refuses servers: that differ from those at start (was) in
// what a reload cannot apply: a view added or removed, or its path, name
// or scopes (its server and auth are built at start). Applying the rest
// without them would be logged as a reload while a view's new scope is
// not required.
func sameServers(file string, was, now []*serverEntry) error {
	if len(now) != len(was) {
		return fmt.Errorf("-upstreams %s: servers: %d views, %d at start: views are added or removed by a restart; a reload applies their tools", file, len(now), len(was))
	}
	const why = "a view's path, name and scopes are read at start (a restart applies them); a reload applies its tools, allow and rateLimit"
	for i, s := range now {
		switch w := was[i]; {
		case s.Path != w.Path:
			return fmt.Errorf("-upstreams %s: servers[%d].path: %q, %q at start: %s", file, i, s.Path, w.Path, why)
		case s.Name != w.Name:
			return fmt.Errorf("-upstreams %s: servers[%d].name: %q, %q at start: %s", file, i, s.Name, w.Name, why)
		case !slices.Equal(s.Scopes, w.Scopes):
			return fmt.Errorf("-upstreams %s: servers[%d].scopes: %v, %v at start: %s", file, i, s.Scopes, w.Scopes, why)
		}
	}
	return nil
}

// fingerprints are the file's entries' fingerprints, by name.
func fingerprints(cfg *upstreamsConfig) map[string]string {
	out := make(map[string]string, len(cfg.upstreams))
	for _, e := range cfg.upstreams {
		out[e.Name] = e.fingerprint()
	}
	return out
}

// reload reads the file again and applies it (gateway.Reload); a bad file
// or an update the gateway refuses is logged and changes nothing. The
// servers' paths, names and scopes are read at start: a reload applies
// their tools, and refuses a change to the rest.
func (r *reloader) reload(ctx context.Context) {
	keep := func(err error) {
		r.logger.Error("upstreams not reloaded; serving as before", "file", r.file, "err", err.Error())
	}
	cfg, err := loadUpstreams(r.file, r.authOn)
	if err == nil {
		err = sameServers(r.file, r.servers, cfg.servers)
	}
	if err != nil {
		keep(err)
		return
	}
	next := fingerprints(cfg)
	err = r.g.Reload(ctx, gateway.Update{
		Upstreams: upstreamOptions(cfg),
		Same:      func(cur, nxt upstream.Options) bool { return r.served[cur.Name] == next[nxt.Name] },
		Views:     gatewayViews(cfg),
	})
	if err != nil {
		keep(err)
		return
	}
	r.served = next
}

// parsePrefix reads a CIDR, or a single address as its own prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR nor an address", s)
	}
	return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
}
