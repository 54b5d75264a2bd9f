package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

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
//   - On SIGHUP the file is read again. A bad file, an upstream that cannot
//     be connected, or a served name that two would share is logged and
//     changes nothing: a reload applies whole or not at all. Otherwise new
//     upstreams are connected, the ones whose entry (or credential file)
//     changed are connected afresh, the others' tools are read again, and
//     the served set is replaced. An upstream removed or replaced is closed
//     only after a grace, its call timeout and a second, so that the calls
//     it was forwarding are answered; its tools are gone at once.
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

	// reloading serializes reloads, and close after them.
	reloading sync.Mutex
	// mu guards what follows, and orders the calls of SetTools: the set
	// published last is built from the upstreams' latest tools.
	mu       sync.Mutex
	srv      *wymcp.Server
	ups      []*live
	retiring map[*live]*time.Timer
	closed   bool
	// watches is the parent of every watch's context.
	watches     context.Context
	stopWatches context.CancelFunc
	wg          sync.WaitGroup
}

// live is a connected upstream.
type live struct {
	e      *upstreamEntry
	u      *upstream.Upstream
	cancel context.CancelFunc // its watch; nil until watched
}

// retireGrace is added to an upstream's call timeout before a removed
// upstream is closed: the last call's answer is on its way by then.
const retireGrace = time.Second

func newGateway(cfg *upstreamsConfig, authOn bool, own []*tools.Tool, ownName string, logger *slog.Logger, tp trace.TracerProvider, mp metric.MeterProvider) *gateway {
	g := &gateway{
		file: cfg.file, authOn: authOn, own: own, ownName: ownName, logger: logger, tp: tp, mp: mp,
		retiring: map[*live]*time.Timer{},
	}
	g.watches, g.stopWatches = context.WithCancel(context.Background())
	return g
}

// connect connects the entries' upstreams at once, each within its
// connectTimeout. On a failure it closes those it connected and returns
// the error of the first entry (in the file's order) that failed.
func (g *gateway) connect(ctx context.Context, entries []*upstreamEntry) ([]*live, error) {
	out := make([]*live, len(entries))
	errs := make([]error, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, e.connectTimeout())
			defer cancel()
			o := e.options()
			o.TracerProvider, o.MeterProvider, o.Logger = g.tp, g.mp, g.logger
			u, err := upstream.Connect(cctx, o)
			if err != nil {
				errs[i] = e.errorAt(g.file, "", "cannot connect: "+err.Error())
				return
			}
			out[i] = &live{e: e, u: u}
		})
	}
	wg.Wait()
	failed := 0
	var first error
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			failed++
		}
	}
	if first == nil {
		return out, nil
	}
	closeAll(out)
	if failed > 1 {
		first = fmt.Errorf("%w (and %d more upstreams)", first, failed-1)
	}
	return nil, first
}

// closeAll closes the upstreams (nil ones skipped) at once.
func closeAll(ls []*live) {
	var wg sync.WaitGroup
	for _, l := range ls {
		if l != nil {
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
	ups, err := g.connect(ctx, cfg.upstreams)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ups = ups
	ts, err := g.served(ups)
	if err != nil {
		return nil, usageError{err: err}
	}
	return ts, nil
}

// start begins serving through srv: the watches start.
func (g *gateway) start(srv *wymcp.Server) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.srv = srv
	for _, l := range g.ups {
		g.watch(l)
	}
}

// watch starts l's watch; g.mu is held.
func (g *gateway) watch(l *live) {
	ctx, cancel := context.WithCancel(g.watches)
	l.cancel = cancel
	g.wg.Go(func() {
		l.u.Watch(ctx, l.e.Refresh, func(ts []*tools.Tool) { g.changed(l.u, l.e.Name, len(ts)) })
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
		case old.e.fingerprint() != e.fingerprint():
			reconnects = append(reconnects, e.Name)
			fresh = append(fresh, e)
		default:
			kept[e.Name] = old
		}
	}
	connected, err := g.connect(ctx, fresh)
	if err != nil {
		keep(err)
		return
	}
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
	g.ups = next
	for _, l := range connected {
		g.watch(l)
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
	g.stopWatches()
	g.wg.Wait()
	closeAll(all)
}

// connected returns the upstreams served.
func (g *gateway) connected() []*live {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.ups)
}

// logAttrs describe l in the start's log.
func (l *live) logAttrs() []any {
	return []any{"upstream", l.e.Name, "url", l.e.URL, "version", l.u.Version(), "tools", len(l.u.Tools()), "prefix", l.e.Prefix}
}
