package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The gateway: -upstreams at run time (the file is upstreams.go). The
// served tools are the tool set's (-tools) followed by every upstream's,
// in the file's order. They change without a restart, and without a call
// lost, failed or crossed:
//
//   - When an upstream's tools change, seen by its watch (every refresh, or
//     at its ttlMs), the served set is rebuilt and replaces the old one
//     (wymcp.Server.SetTools: a call under way keeps the tool it resolved).
//   - An upstream that cannot be connected, at start or on a reload, costs
//     only its own tools: it is logged and tried again in the background,
//     with backoff (a second, doubling to half a minute), while the others
//     are served; its tools are served once it connects.
//   - On SIGHUP the file is read again. A bad file, or a served name that
//     two would share, is logged and changes nothing: a reload applies
//     whole or not at all. Otherwise new upstreams are connected, the ones
//     whose entry (or credential file) changed, and the pending ones, are
//     connected afresh, the others' tools are read again, and the served
//     set is replaced. An upstream removed or replaced is closed only
//     after a grace, its call timeout and a second, so that the calls it
//     was forwarding are answered; its tools are gone at once.
//   - At the stop, the upstreams are closed once the server has drained.
type gateway struct {
	file   string
	authOn bool
	// own is the tool set's tools, and ownName names it in errors.
	own     []*tools.Tool
	ownName string
	logger  *slog.Logger
	tp      trace.TracerProvider
	mp      metric.MeterProvider

	// reloading serializes reloads, the upstreams connecting late, and
	// close after them.
	reloading sync.Mutex
	// mu guards what follows, and orders the calls of SetTools: the set
	// published last is built from the upstreams' latest tools.
	mu       sync.Mutex
	srv      *wymcp.Server
	ups      []*live
	retiring map[*live]*time.Timer
	closed   bool
	// serving is the number of tools served, for /readyz.
	serving int
	// watches is the parent of every watch's context.
	watches     context.Context
	stopWatches context.CancelFunc
	wg          sync.WaitGroup
}

// live is an upstream of the file: connected, or pending (u nil) while it
// is tried again. Its entry and upstream never change (cancel is set once,
// under the gateway's mu, when it is started): a pending one that connects
// is replaced in the list by a connected one.
type live struct {
	e      *upstreamEntry
	u      *upstream.Upstream
	cancel context.CancelFunc // its watch, or its tries; nil until started
}

// Backoff of a pending upstream's tries.
const (
	firstRetry = time.Second
	maxRetry   = 30 * time.Second
)

// retireGrace is added to an upstream's call timeout before a removed
// upstream is closed: the last call's answer is on its way by then.
const retireGrace = time.Second

func newGateway(cfg *upstreamsConfig, authOn bool, own []*tools.Tool, ownName string, logger *slog.Logger, tp trace.TracerProvider, mp metric.MeterProvider) *gateway {
	g := &gateway{
		file: cfg.file, authOn: authOn, own: own, ownName: ownName, logger: logger, tp: tp, mp: mp,
		retiring: map[*live]*time.Timer{},
	}
	g.watches, g.stopWatches = context.WithCancel(context.Background())
	if mp != nil {
		// wymcp.upstream.connected: 1 for an upstream connected, 0 for one
		// pending, by upstream.
		gauge, err := mp.Meter("github.com/wymcp/wymcp/cmd/wymcp").Int64ObservableGauge("wymcp.upstream.connected",
			metric.WithUnit("{upstream}"),
			metric.WithDescription("Whether an upstream of the file is connected (1) or tried again in the background (0)."))
		if err == nil {
			_, _ = mp.Meter("github.com/wymcp/wymcp/cmd/wymcp").RegisterCallback(func(_ context.Context, o metric.Observer) error {
				for _, l := range g.upstreams() {
					v := int64(0)
					if l.u != nil {
						v = 1
					}
					o.ObserveInt64(gauge, v, metric.WithAttributes(attribute.String("wymcp.upstream", l.e.Name)))
				}
				return nil
			}, gauge)
		}
	}
	return g
}

// connect connects the entries' upstreams at once, each within its
// connectTimeout. One that fails is logged and returned pending: it is
// tried again once started (tryLater).
func (g *gateway) connect(ctx context.Context, entries []*upstreamEntry) []*live {
	out := make([]*live, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() {
			u, err := g.dial(ctx, e)
			if err != nil {
				g.logger.Warn("upstream not connected; the others are served, and it is tried again in the background",
					"upstream", e.Name, "url", e.URL, "err", err.Error(), "retry_in", firstRetry)
			}
			out[i] = &live{e: e, u: u}
		})
	}
	wg.Wait()
	return out
}

// dial connects e's upstream within its connectTimeout.
func (g *gateway) dial(ctx context.Context, e *upstreamEntry) (*upstream.Upstream, error) {
	cctx, cancel := context.WithTimeout(ctx, e.connectTimeout())
	defer cancel()
	o := e.options()
	o.TracerProvider, o.MeterProvider, o.Logger = g.tp, g.mp, g.logger
	u, err := upstream.Connect(cctx, o)
	if err != nil {
		return nil, e.errorAt(g.file, "", "cannot connect: "+err.Error())
	}
	return u, nil
}

// tryLater tries the pending l again, with backoff, until it connects or
// is removed; then it takes l's place, its tools served. g.mu is held.
func (g *gateway) tryLater(l *live) {
	ctx, cancel := context.WithCancel(g.watches)
	l.cancel = cancel
	g.wg.Go(func() {
		wait := firstRetry
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(jitter(wait)):
			}
			u, err := g.dial(ctx, l.e)
			if err == nil {
				g.connected(l, u)
				return
			}
			wait = min(2*wait, maxRetry)
			if ctx.Err() == nil {
				g.logger.Warn("upstream not connected", "upstream", l.e.Name, "err", err.Error(), "retry_in", wait)
			}
		}
	})
}

// jitter spreads d by a fifth either way, so that replicas started
// together do not try together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()-0.5)*0.4*float64(d))
}

// connected puts the upstream u, connected late, in the pending l's place
// and serves its tools; if l was removed or the gateway closed meanwhile,
// u is closed.
func (g *gateway) connected(l *live, u *upstream.Upstream) {
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.ups, l)
	if g.closed || i < 0 {
		go u.Close()
		return
	}
	next := slices.Clone(g.ups)
	c := &live{e: l.e, u: u}
	next[i] = c
	ts, err := g.served(next)
	if err == nil {
		err = g.srv.SetTools(ts...)
	}
	if err != nil {
		go u.Close()
		g.logger.Error("upstream connected, but its tools cannot be served; fix the file and reload", "upstream", l.e.Name, "err", err.Error())
		return
	}
	g.ups, g.serving = next, len(ts)
	g.watch(c)
	g.logger.Info("upstream connected", c.logAttrs()...)
}

// closeAll closes the upstreams (pending ones skipped) at once.
func closeAll(ls []*live) {
	var wg sync.WaitGroup
	for _, l := range ls {
		if l != nil && l.u != nil {
			wg.Go(func() { _ = l.u.Close() })
		}
	}
	wg.Wait()
}

// served is the served set: the tool set's tools, then each upstream's.
// A name served twice is an error naming both, at the later upstream's
// prefix.
func (g *gateway) served(ups []*live) ([]*tools.Tool, error) {
	ts := append([]*tools.Tool(nil), g.own...)
	by := make(map[string]string, len(ts))
	for _, t := range g.own {
		by[t.Name()] = g.ownName
	}
	for _, l := range ups {
		if l.u == nil {
			continue // pending
		}
		mine := "upstream " + l.e.Name
		for _, t := range l.u.Tools() {
			if other, dup := by[t.Name()]; dup {
				return nil, l.e.errorAt(g.file, "prefix", fmt.Sprintf("%s would serve a tool as %q, a name %s serves already; give one of them a prefix, or exclude the tool", mine, t.Name(), other))
			}
			by[t.Name()] = mine
			ts = append(ts, t)
		}
	}
	return ts, nil
}

// open connects the file's upstreams, at start, and returns the served
// set. A name served twice is a usageError.
func (g *gateway) open(ctx context.Context, cfg *upstreamsConfig) ([]*tools.Tool, error) {
	ups := g.connect(ctx, cfg.upstreams)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ups = ups
	ts, err := g.served(ups)
	if err != nil {
		closeAll(ups)
		return nil, usageError{err: err}
	}
	g.serving = len(ts)
	return ts, nil
}

// start begins serving through srv: the watches start.
func (g *gateway) start(srv *wymcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.srv = srv
	for _, l := range g.ups {
		g.start1(l)
	}
}

// start1 starts l's watch, or its tries while pending; g.mu is held.
func (g *gateway) start1(l *live) {
	if l.u == nil {
		g.tryLater(l)
		return
	}
	g.watch(l)
}

// watch starts l's watch; g.mu is held.
func (g *gateway) watch(l *live) {
	ctx, cancel := context.WithCancel(g.watches)
	l.cancel = cancel
	g.wg.Go(func() {
		l.u.Watch(ctx, func(ts []*tools.Tool) { g.changed(l.u, l.e.Name, len(ts)) })
	})
}

// changed publishes the served set after u's tools changed.
func (g *gateway) changed(u *upstream.Upstream, name string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !slices.ContainsFunc(g.ups, func(l *live) bool { return l.u == u }) {
		return // removed meanwhile
	}
	ts, err := g.served(g.ups)
	if err == nil {
		err = g.srv.SetTools(ts...)
	}
	if err != nil {
		g.logger.Error("upstream tools changed, but the new set cannot be served; the served tools stay as they were",
			"upstream", name, "err", err.Error())
		return
	}
	g.serving = len(ts)
	g.logger.Info("tools changed", "upstream", name, "upstream_tools", n, "served", len(ts))
}

// reload reads the file again and applies it (see gateway); it logs what
// it did, or why it changed nothing.
func (g *gateway) reload(ctx context.Context) {
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	closed, current := g.closed, g.ups
	g.mu.Unlock()
	if closed {
		return
	}
	keep := func(err error) {
		g.logger.Error("upstreams not reloaded; serving as before", "file", g.file, "err", err.Error())
	}
	cfg, err := loadUpstreams(g.file, g.authOn)
	if err != nil {
		keep(err)
		return
	}
	byName := make(map[string]*live, len(current))
	for _, l := range current {
		byName[l.e.Name] = l
	}
	var (
		fresh             []*upstreamEntry
		added, reconnects []string
		kept              = map[string]*live{}
	)
	for _, e := range cfg.upstreams {
		old, ok := byName[e.Name]
		switch {
		case !ok:
			added = append(added, e.Name)
			fresh = append(fresh, e)
		case old.e.fingerprint() != e.fingerprint(), old.u == nil:
			// A pending upstream is tried at once, afresh: its tries may
			// have ended (its tools clashed with another's when it
			// connected late, which this file may have fixed).
			reconnects = append(reconnects, e.Name)
			fresh = append(fresh, e)
		default:
			kept[e.Name] = old
		}
	}
	connected := g.connect(ctx, fresh)
	byEntry := make(map[*upstreamEntry]*live, len(connected))
	for _, l := range connected {
		byEntry[l.e] = l
	}
	// The upstreams kept are read again: a reload is also the way to pick
	// up a change at once.
	var wg sync.WaitGroup
	for _, l := range kept {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, l.e.connectTimeout())
			defer cancel()
			if _, err := l.u.Refresh(rctx); err != nil {
				g.logger.Warn("upstream tools/list failed; its tools stay as they were", "upstream", l.e.Name, "err", err.Error())
			}
		})
	}
	wg.Wait()
	next := make([]*live, 0, len(cfg.upstreams))
	for _, e := range cfg.upstreams {
		if l, ok := kept[e.Name]; ok {
			// The same upstream and watch; the new entry, the same but
			// for its place in the list, which errors name.
			next = append(next, &live{e: e, u: l.u, cancel: l.cancel})
		} else {
			next = append(next, byEntry[e])
		}
	}

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		closeAll(connected)
		return
	}
	ts, err := g.served(next)
	if err == nil {
		err = g.srv.SetTools(ts...)
	}
	if err != nil {
		g.mu.Unlock()
		closeAll(connected)
		keep(err)
		return
	}
	var removed []string
	for _, l := range current {
		if k, ok := kept[l.e.Name]; ok && k.u == l.u {
			continue
		}
		if !slices.Contains(reconnects, l.e.Name) {
			removed = append(removed, l.e.Name)
		}
		g.retire(l)
	}
	g.ups, g.serving = next, len(ts)
	for _, l := range connected {
		g.start1(l)
	}
	g.mu.Unlock()
	g.logger.Info("upstreams reloaded", "file", g.file, "upstreams", len(next), "served", len(ts),
		"added", strings.Join(added, ","), "reconnected", strings.Join(reconnects, ","), "removed", strings.Join(removed, ","))
}

// retire stops l's watch and closes it once the calls it forwards have
// had their time; g.mu is held.
func (g *gateway) retire(l *live) {
	if l.cancel != nil {
		l.cancel()
	}
	grace := l.e.callTimeout() + retireGrace
	if l.u == nil {
		return // pending: nothing to close
	}
	g.retiring[l] = time.AfterFunc(grace, func() {
		g.mu.Lock()
		_, ok := g.retiring[l]
		delete(g.retiring, l)
		g.mu.Unlock()
		if ok {
			_ = l.u.Close()
			g.logger.Info("upstream closed", "upstream", l.e.Name, "after", grace)
		}
	})
}

// close stops the watches and closes every upstream, retiring ones
// included. It waits for a reload under way (whose ctx has ended).
func (g *gateway) close() {
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	all := append([]*live(nil), g.ups...)
	for l, t := range g.retiring {
		t.Stop()
		all = append(all, l)
	}
	g.retiring = nil
	g.mu.Unlock()
	// Released before the wait: an upstream connecting late takes it, and
	// finds the gateway closed.
	g.reloading.Unlock()
	g.stopWatches()
	g.wg.Wait()
	g.reloading.Lock()
	closeAll(all)
}

// upstreams returns the upstreams of the file, pending ones included.
func (g *gateway) upstreams() []*live {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.ups)
}

// ready reports whether the gateway serves a tool: a replica is ready
// when the file was read and a tool of it (or of the tool set) is served,
// not when every upstream is, so that one upstream down does not take
// every replica out of its balancer (docs/operations.md).
func (g *gateway) ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.serving > 0
}

// logAttrs describe l in the start's log.
func (l *live) logAttrs() []any {
	return []any{"upstream", l.e.Name, "url", l.e.URL, "version", l.u.Version(), "tools", len(l.u.Tools()), "prefix", l.e.Prefix}
}

// readiness is next (the server's own readiness: not draining, auth
// ready), and 503 while the gateway serves no tool at all.
func (g *gateway) readiness(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.ready() {
			http.Error(w, "no tool served yet: every upstream is still connecting", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
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
