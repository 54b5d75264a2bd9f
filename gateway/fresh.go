package gateway

import (
	"context"
	"path"
	"time"

	"github.com/wymcp/wymcp/upstream"
)

// Freshness (docs/design.md §10e). The served set changes while the
// gateway serves, so every view serves subscriptions/listen
// (wymcp.Options.ToolsChange: a Reload can change any set); its
// tools/list's ttlMs is never longer than the interval at which its set
// may change; and a call naming a tool this replica does not know yet, one
// another replica may already serve, reads the upstreams that could serve
// it again before it is answered as unknown.

// defaultCacheTTL is wymcp.Options.CacheTTL's default, the ttlMs of a
// set that changes only by a Reload.
const defaultCacheTTL = 5 * time.Minute

// pendingTTL is how soon a pending upstream's tools may be served: the
// longest wait between its tries, jitter included.
const pendingTTL = maxRetry + maxRetry/5

// unknownWait bounds how long a call of an unknown name waits for the
// upstreams to be read again before it is answered as unknown.
const unknownWait = 5 * time.Second

// unknownEvery is how often, at most, a call of an unknown name reads one
// upstream again: unknown names, whoever sends them, cost each upstream at
// most one tools/list a second.
const unknownEvery = time.Second

// configuredTTL is the ttlMs configured for the views: a set that changes
// only by a Reload.
func configuredTTL(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return defaultCacheTTL
	case d < 0:
		return 0
	}
	return d
}

// listTTL is the ttlMs of every view's tools/list: the configured one,
// but no longer than any upstream's refresh interval (a pending one's
// tries); g.mu is held. Every upstream counts for every view: a tool it
// adds may match any view's patterns.
func (g *Gateway) listTTL(ups []*live) time.Duration {
	ttl := g.cacheTTL
	for _, l := range ups {
		if l.u == nil {
			ttl = min(ttl, pendingTTL)
			continue
		}
		ttl = min(ttl, l.u.RefreshInterval())
	}
	return ttl
}

// applyTTL gives every view the ttlMs of ups' set; g.mu is held.
func (g *Gateway) applyTTL(ups []*live) {
	ttl := g.listTTL(ups)
	for _, v := range g.views {
		if v.ttl == ttl {
			continue
		}
		if err := v.srv.SetCacheTTL(ttl); err != nil {
			// The set was encoded before; only a broken invariant lands here.
			g.logger.Error("the ttlMs of tools/list could not be changed", "view", v.path, "err", err.Error())
			continue
		}
		v.ttl = ttl
	}
}

// refreshing is one upstream's reading again for calls of unknown names:
// done is closed when the read in flight ends; last is when it began.
type refreshing struct {
	done chan struct{}
	last time.Time
}

// unknown is v's wymcp.Options.UnknownTool: a call names a tool the view
// does not serve. When the view's patterns pick the name, every connected
// upstream that may serve it (upstream.MayServe) is read again, at once,
// each read shared by the calls that wait for it and begun at most once
// per unknownEvery per upstream; the call waits for them, up to
// unknownWait or its own end. It reports whether any was read, so that
// the view looks the name up again in the set they left.
func (g *Gateway) unknown(ctx context.Context, v *view, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, unknownWait)
	defer cancel()
	var waits []chan struct{}
	g.mu.Lock()
	if g.closed || !picks(v.sel.patterns, name) {
		g.mu.Unlock()
		return false
	}
	now := time.Now()
	for _, l := range g.ups {
		if l.u == nil || !l.u.MayServe(name) {
			continue
		}
		r := g.rereads[l.u]
		switch {
		case r != nil && !closedChan(r.done):
			waits = append(waits, r.done) // in flight: share it
		case r != nil && now.Sub(r.last) < g.unknownEvery:
			// Read a moment ago: its tools are as fresh as they get.
		default:
			r = &refreshing{done: make(chan struct{}), last: now}
			g.rereads[l.u] = r
			waits = append(waits, r.done)
			g.reread(l, r)
		}
	}
	g.mu.Unlock()
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return false
		}
	}
	return len(waits) > 0
}

// reread reads l's upstream again for calls of an unknown name, and
// serves what changed before it closes r.done; g.mu is held.
func (g *Gateway) reread(l *live, r *refreshing) {
	u, o := l.u, l.o
	g.wg.Go(func() {
		defer close(r.done)
		ctx, cancel := context.WithTimeout(g.watches, connectTimeout(o))
		defer cancel()
		changed, err := u.Refresh(ctx)
		if err != nil {
			if ctx.Err() == nil || g.watches.Err() == nil {
				g.logger.Warn("upstream tools/list failed; its tools stay as they were", "upstream", o.Name, "err", err.Error())
			}
			return
		}
		if changed {
			g.changed(u, o.Name, len(u.Tools()))
		}
	})
}

// forget drops u's reading state once it is retired; g.mu is held.
func (g *Gateway) forget(u *upstream.Upstream) { delete(g.rereads, u) }

// closedChan reports whether c is closed.
func closedChan(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// picks reports whether patterns (a view's) pick the tool name.
func picks(patterns []string, name string) bool {
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
