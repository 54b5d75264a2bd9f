package gateway

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The upstreams' lives. Their tools change without a restart, and without
// a call lost, failed or crossed:
//
//   - When an upstream's tools change, seen by its watch (upstream.Watch),
//     the served sets are rebuilt and replace the old ones
//     (wymcp.Server.SetTools: a call under way keeps the tool it resolved).
//   - An upstream that cannot be connected, at New or on a Reload, costs
//     only its own tools: it is logged and tried again in the background,
//     with backoff, while the others are served; its tools are served
//     once it connects, in its place in the order.
//   - An upstream removed or replaced by a Reload is closed only after a
//     grace, its call timeout and a second, so that the calls it was
//     forwarding are answered; its tools are gone at once.
//   - Close stops the watches and closes the upstreams.

// live is an upstream: connected, or pending (u nil) while it is tried
// again. Its options and upstream never change (cancel is set once, under
// the Gateway's mu, when it is started): a pending one that connects is
// replaced in the list by a connected one.
type live struct {
	o      upstream.Options
	u      *upstream.Upstream
	cancel context.CancelFunc // its watch, or its tries; nil until started
}

// Backoff of a pending upstream's tries.
const (
	firstRetry = time.Second
	maxRetry   = 30 * time.Second
)

// The defaults of upstream.Options' CallTimeout and ConnectTimeout, which
// the gateway's own waits are based on.
const (
	defaultCallTimeout    = 60 * time.Second
	defaultConnectTimeout = 10 * time.Second
)

// retireGrace is added to an upstream's call timeout before a removed
// upstream is closed: the last call's answer is on its way by then.
const retireGrace = time.Second

// connect connects the upstreams at once, each within its
// ConnectTimeout. One that fails is logged and returned pending: it is
// tried again once started.
func (g *Gateway) connect(ctx context.Context, list []upstream.Options) []*live {
	out := make([]*live, len(list))
	var wg sync.WaitGroup
	for i, o := range list {
		o = g.withDefaults(o)
		wg.Go(func() {
			u, err := dial(ctx, o)
			if err != nil {
				g.logger.Warn("upstream not connected; the others are served, and it is tried again in the background",
					"upstream", o.Name, "url", cmp.Or(o.URL, "stdio:"+o.Command), "err", err.Error(), "retry_in", firstRetry)
			}
			out[i] = &live{o: o, u: u}
		})
	}
	wg.Wait()
	return out
}

// withDefaults gives o the gateway's logger and providers where it has none.
func (g *Gateway) withDefaults(o upstream.Options) upstream.Options {
	if o.Logger == nil {
		o.Logger = g.logger
	}
	if o.TracerProvider == nil {
		o.TracerProvider = g.tp
	}
	if o.MeterProvider == nil {
		o.MeterProvider = g.mp
	}
	return o
}

// dial connects o's upstream within its ConnectTimeout.
func dial(ctx context.Context, o upstream.Options) (*upstream.Upstream, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout(o))
	defer cancel()
	return upstream.Connect(ctx, o)
}

func connectTimeout(o upstream.Options) time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return defaultConnectTimeout
}

func callTimeout(o upstream.Options) time.Duration {
	if o.CallTimeout > 0 {
		return o.CallTimeout
	}
	return defaultCallTimeout
}

// start starts l's watch, or its tries while pending; g.mu is held.
func (g *Gateway) start(l *live) {
	if l.u == nil {
		g.tryLater(l)
		return
	}
	g.watch(l)
}

// tryLater tries the pending l again, with backoff, until it connects or
// is removed; then it takes l's place. g.mu is held.
func (g *Gateway) tryLater(l *live) {
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
			u, err := dial(ctx, l.o)
			if err == nil {
				g.connected(l, u)
				return
			}
			wait = min(2*wait, maxRetry)
			if ctx.Err() == nil {
				g.logger.Warn("upstream not connected", "upstream", l.o.Name, "err", err.Error(), "retry_in", wait)
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
func (g *Gateway) connected(l *live, u *upstream.Upstream) {
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	l.cancel() // its tries are over
	i := slices.Index(g.ups, l)
	if g.closed || i < 0 {
		go u.Close()
		return
	}
	next := slices.Clone(g.ups)
	c := &live{o: l.o, u: u}
	next[i] = c
	if err := g.publish(next, g.selections()); err != nil {
		go u.Close()
		g.logger.Error("upstream connected, but its tools cannot be served; it stays pending until a reload", "upstream", l.o.Name, "err", err.Error())
		return
	}
	g.ups = next
	g.watch(c)
	g.logger.Info("upstream connected", c.logAttrs()...)
}

// watch starts l's watch; g.mu is held.
func (g *Gateway) watch(l *live) {
	ctx, cancel := context.WithCancel(g.watches)
	l.cancel = cancel
	u, name := l.u, l.o.Name
	g.wg.Go(func() {
		u.Watch(ctx, func(ts []*tools.Tool) { g.changed(u, name, len(ts)) })
	})
}

// changed serves the new sets after u's tools changed.
func (g *Gateway) changed(u *upstream.Upstream, name string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || !slices.ContainsFunc(g.ups, func(l *live) bool { return l.u == u }) {
		return // removed meanwhile
	}
	if err := g.publish(g.ups, g.selections()); err != nil {
		g.logger.Error("upstream tools changed, but the new set cannot be served; the served tools stay as they were",
			"upstream", name, "err", err.Error())
		return
	}
	g.logger.Info("tools changed", "upstream", name, "upstream_tools", n, "served", g.serving)
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

// retire stops l's watch and closes it once the calls it forwards have
// had their time; g.mu is held.
func (g *Gateway) retire(l *live) {
	if l.cancel != nil {
		l.cancel()
	}
	if l.u == nil {
		return // pending: nothing to close
	}
	g.forget(l.u)
	grace := callTimeout(l.o) + retireGrace
	g.retiring[l] = time.AfterFunc(grace, func() {
		g.mu.Lock()
		_, ok := g.retiring[l]
		delete(g.retiring, l)
		g.mu.Unlock()
		if ok {
			_ = l.u.Close()
			g.logger.Info("upstream closed", "upstream", l.o.Name, "after", grace)
		}
	})
}

// Close stops the watches and the tries, and closes every upstream,
// retiring ones included, at once: the calls they forward fail. Call it
// once the views have drained (Shutdown does both), or after a failed
// start. It waits for a Reload under way (whose ctx should have ended).
// The views' servers are not stopped: Shutdown does that.
func (g *Gateway) Close() {
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	all := slices.Clone(g.ups)
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
	if g.unreg != nil {
		_ = g.unreg.Unregister()
	}
	closeAll(all)
}

// logAttrs describe l in the log.
func (l *live) logAttrs() []any {
	return []any{"upstream", l.o.Name, "url", cmp.Or(l.o.URL, "stdio:"+l.o.Command), "version", l.u.Version(), "tools", len(l.u.Tools()), "prefix", l.o.Prefix}
}
