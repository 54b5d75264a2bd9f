package gateway

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/wymcp/wymcp/upstream"
)

// Update is a new configuration for Reload.
type Update struct {
	// Upstreams replace the gateway's, in order (which decides name
	// conflicts, as at New). Names must be unique.
	Upstreams []upstream.Options
	// Same reports whether the upstream now connected under a name and
	// the one of Upstreams under that name are configured alike, so that
	// its connection is kept (and its tools read again); otherwise it is
	// connected afresh. A caller that reads the options from a file
	// compares what the file said (and the contents of its credential
	// files), which Options alone cannot tell: Credentials is an
	// interface, made anew by each read. Nil compares the Options field
	// by field, Credentials, HTTPClient, Logger, the providers and the
	// rules (Allow, each Override's) by identity.
	Same func(current, next upstream.Options) bool
	// Views, when not nil, replace the views' Tools patterns, Allow and
	// RateLimit: one per view of Options.Views, the same paths in the
	// same order (a view is added or removed by building a new Gateway;
	// Name and Auth are not read). Nil keeps them.
	Views []View
}

// Reload applies u, whole or not at all: an Update that cannot be served
// (a bad pattern, a name twice, an upstream's options
// upstream.Options.Validate refuses, a view's set its server refuses) is an
// error and changes nothing. Otherwise the upstreams not there before are
// connected, at once, each within its ConnectTimeout, and those whose
// options changed (by u.Same), and the pending ones, afresh; the others
// keep their connection and watch, and their tools are read again (a
// reload is also the way to pick up a change at once). One that cannot be
// connected is pending, not an error. Then every view's set is replaced.
// An upstream removed or replaced is closed after its CallTimeout and a
// second, so that the calls it was forwarding are answered; its tools
// are gone at once. Reloads are serialized; after Close, Reload returns
// ErrClosed. It logs what it did.
func (g *Gateway) Reload(ctx context.Context, u Update) error {
	if err := checkUpstreams(u.Upstreams); err != nil {
		return err
	}
	g.reloading.Lock()
	defer g.reloading.Unlock()
	g.mu.Lock()
	closed, current, sels := g.closed, g.ups, g.selections()
	g.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if u.Views != nil {
		var err error
		if sels, err = g.newSelections(u.Views); err != nil {
			return err
		}
	}
	same := u.Same
	if same == nil {
		same = sameOptions
	}
	byName := make(map[string]*live, len(current))
	for _, l := range current {
		byName[l.o.Name] = l
	}
	var (
		fresh             []upstream.Options
		added, reconnects []string
		kept              = map[string]*live{}
	)
	for _, o := range u.Upstreams {
		old, ok := byName[o.Name]
		switch {
		case !ok:
			added = append(added, o.Name)
			fresh = append(fresh, o)
		case old.u == nil || !same(old.o, g.withDefaults(o)):
			// A pending upstream is tried at once, afresh: its tries may
			// have ended (its set was refused when it connected late).
			reconnects = append(reconnects, o.Name)
			fresh = append(fresh, o)
		default:
			kept[o.Name] = old
		}
	}
	connected := g.connect(ctx, fresh)
	byNew := make(map[string]*live, len(connected))
	for _, l := range connected {
		byNew[l.o.Name] = l
	}
	var wg sync.WaitGroup
	for _, l := range kept {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, connectTimeout(l.o))
			defer cancel()
			if _, err := l.u.Refresh(rctx); err != nil {
				g.logger.Warn("upstream tools/list failed; its tools stay as they were", "upstream", l.o.Name, "err", err.Error())
			}
		})
	}
	wg.Wait()
	next := make([]*live, 0, len(u.Upstreams))
	for _, o := range u.Upstreams {
		if l, ok := kept[o.Name]; ok {
			// The same upstream and watch; the new options, alike but for
			// what Same chose to overlook.
			next = append(next, &live{o: g.withDefaults(o), u: l.u, cancel: l.cancel})
		} else {
			next = append(next, byNew[o.Name])
		}
	}

	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		closeAll(connected)
		return ErrClosed
	}
	if err := g.publish(next, sels); err != nil {
		g.mu.Unlock()
		closeAll(connected)
		return err
	}
	var removed []string
	for _, l := range current {
		if k, ok := kept[l.o.Name]; ok && k.u == l.u {
			continue
		}
		if !slices.Contains(reconnects, l.o.Name) {
			removed = append(removed, l.o.Name)
		}
		g.retire(l)
	}
	g.ups = next
	for _, l := range connected {
		g.start(l)
		if l.u != nil {
			g.logger.Info("upstream connected", l.logAttrs()...)
		}
	}
	served := g.serving
	g.mu.Unlock()
	g.logger.Info("upstreams reloaded", "upstreams", len(next), "served", served,
		"added", strings.Join(added, ","), "reconnected", strings.Join(reconnects, ","), "removed", strings.Join(removed, ","))
	return nil
}

// newSelections checks an Update's views against the gateway's and
// returns their selections.
func (g *Gateway) newSelections(vs []View) ([]selection, error) {
	if len(vs) != len(g.views) {
		return nil, fmt.Errorf("gateway: the update has %d views, the gateway %d: views are added or removed by a new Gateway", len(vs), len(g.views))
	}
	out := make([]selection, len(vs))
	for i, v := range vs {
		if v.Path != g.views[i].path {
			return nil, fmt.Errorf("gateway: the update's Views[%d] is %q, the gateway's %q: views are added, removed or moved by a new Gateway", i, v.Path, g.views[i].path)
		}
		if err := checkPatterns(i, v.Tools); err != nil {
			return nil, err
		}
		if err := checkGuard(i, v); err != nil {
			return nil, err
		}
		out[i] = selectionOf(v)
	}
	return out, nil
}

// sameOptions is Update.Same's default: every field equal, those that
// hold a live object by identity: the rules too (Allow, and each
// Override's), which an embedder may change under its own lock, and
// whose fields equal today say nothing of tomorrow.
func sameOptions(a, b upstream.Options) bool {
	if !sameObject(a.Credentials, b.Credentials) || a.HTTPClient != b.HTTPClient || a.Logger != b.Logger ||
		!sameObject(a.TracerProvider, b.TracerProvider) || !sameObject(a.MeterProvider, b.MeterProvider) ||
		!sameObject(a.Allow, b.Allow) || len(a.Overrides) != len(b.Overrides) {
		return false
	}
	for name, ov := range a.Overrides {
		if other, ok := b.Overrides[name]; !ok || !sameObject(ov.Allow, other.Allow) {
			return false
		}
	}
	a.Credentials, b.Credentials = nil, nil
	a.HTTPClient, b.HTTPClient = nil, nil
	a.Logger, b.Logger = nil, nil
	a.TracerProvider, b.TracerProvider = nil, nil
	a.MeterProvider, b.MeterProvider = nil, nil
	a.Allow, b.Allow = nil, nil
	a.Overrides, b.Overrides = withoutRules(a.Overrides), withoutRules(b.Overrides)
	return reflect.DeepEqual(a, b)
}

// withoutRules is a copy of ovs with no Allow, which sameOptions compares
// by identity apart.
func withoutRules(ovs map[string]upstream.Override) map[string]upstream.Override {
	if ovs == nil {
		return nil
	}
	out := make(map[string]upstream.Override, len(ovs))
	for name, ov := range ovs {
		ov.Allow = nil
		out[name] = ov
	}
	return out
}

// sameObject compares two interface values by identity, never panicking
// on a dynamic type that cannot be compared (such values are taken to
// differ).
func sameObject(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || !va.Comparable() || !vb.Comparable() {
		return false
	}
	return va.Equal(vb)
}
