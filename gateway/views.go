package gateway

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/tools"
)

// view is one endpoint: its server, and the tools it serves now.
type view struct {
	path string
	srv  *wymcp.Server
	// ready is srv's readiness endpoint.
	ready http.Handler
	// sel, tools and guarded change on a reload or an upstream's change,
	// under the Gateway's mu. guarded maps each served tool the view
	// picks to the copy it serves with the view's guard, so that a set
	// rebuilt from the same tools is the same set (publish compares them)
	// while the guard is the same.
	sel     selection
	tools   []*tools.Tool
	guarded map[*tools.Tool]*tools.Tool
	// ttl is the ttlMs its tools/list answers, under the Gateway's mu
	// (fresh.go).
	ttl time.Duration
}

// selection is what a view serves of the served tools: those its patterns
// pick, each guarded by the view's rule and limit (docs/design.md §11).
type selection struct {
	patterns []string
	allow    access.Rule
	limit    access.Limit
}

// selectionOf returns v's selection.
func selectionOf(v View) selection {
	return selection{patterns: slices.Clone(v.Tools), allow: v.Allow, limit: v.RateLimit}
}

// sameGuard reports whether a and b guard alike: the same rule (by
// identity) and limit.
func (a selection) sameGuard(b selection) bool {
	return sameObject(a.allow, b.allow) && a.limit == b.limit
}

// pick returns the tools of ts whose names match a pattern of sel, in ts'
// order (no pattern picks them all), guarded by sel's rule and limit with
// the view at path's key; and the copies made so, by tool. Copies in
// cache, made for a guard like sel's, are reused when reuse is true.
func pick(ts []*tools.Tool, sel selection, viewPath string, cache map[*tools.Tool]*tools.Tool, reuse bool) ([]*tools.Tool, map[*tools.Tool]*tools.Tool) {
	out := ts
	if len(sel.patterns) > 0 {
		out = make([]*tools.Tool, 0, len(ts))
		for _, t := range ts {
			if picks(sel.patterns, t.Name()) {
				out = append(out, t)
			}
		}
	}
	if sel.allow == nil && sel.limit.IsZero() {
		return out, nil
	}
	g := toolrun.Guard{Rule: sel.allow, Limit: sel.limit, Key: "view:" + viewPath}
	guarded := make([]*tools.Tool, len(out))
	made := make(map[*tools.Tool]*tools.Tool, len(out))
	for i, t := range out {
		c := cache[t]
		if c == nil || !reuse {
			c = toolrun.Wrap(toolrun.Guarded(toolrun.Of(t), "", g)).(*tools.Tool)
		}
		guarded[i], made[t] = c, c
	}
	return guarded, made
}

// keySize is the size of a requestState key (AES-256), which
// wymcp.Options.StateKeys checks.
const keySize = 32

// stateRing is the ring the views' keys are derived from: the server's,
// or a random key for this Gateway's life.
func stateRing(opts Options) ([][]byte, error) {
	for i, k := range opts.Server.StateKeys {
		// Checked here, since a derived key is always of the right size.
		if len(k) != keySize {
			return nil, fmt.Errorf("gateway: Options.Server.StateKeys[%d] is %d bytes; each key must be %d bytes (AES-256)", i, len(k), keySize)
		}
	}
	if len(opts.Server.StateKeys) > 0 || len(opts.Views) == 0 {
		return opts.Server.StateKeys, nil
	}
	key := make([]byte, keySize)
	rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return [][]byte{key}, nil
}

// viewKeys derives the view at path's ring from ring, key by key, so that
// rotating the ring rotates every view's, and no view's key opens
// another's states.
func viewKeys(ring [][]byte, path string) [][]byte {
	out := make([][]byte, len(ring))
	for i, k := range ring {
		m := hmac.New(sha256.New, k)
		m.Write([]byte("wymcp view " + path))
		out[i] = m.Sum(nil)
	}
	return out
}

// ReadinessHandler is the gateway's readiness endpoint: each view's
// (wymcp.Server.ReadinessHandler: 503 once a drain begins, or while a
// view's authenticator is not ready), and then 503 while no tool at all
// is served (every upstream still connecting). A gateway is ready when a
// tool is served, not when every upstream is, so that one upstream down
// does not take every replica out of its balancer (docs/operations.md).
func (g *Gateway) ReadinessHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var last *captured
		for _, v := range g.views {
			c := &captured{header: http.Header{}}
			v.ready.ServeHTTP(c, r)
			if c.code != http.StatusOK {
				c.writeTo(w)
				return
			}
			last = c
		}
		if !g.ready() {
			http.Error(w, "no tool served yet: every upstream is still connecting", http.StatusServiceUnavailable)
			return
		}
		last.writeTo(w)
	})
}

// ready reports whether a tool is served.
func (g *Gateway) ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.serving > 0
}

// captured is a view's readiness answer, held until the gateway knows
// which to send.
type captured struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (c *captured) Header() http.Header { return c.header }
func (c *captured) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
}
func (c *captured) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return c.body.Write(b)
}

func (c *captured) writeTo(w http.ResponseWriter) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.code)
	_, _ = w.Write(c.body.Bytes())
}

// Drain drains every view together (wymcp.Server.Drain): each a lame
// duck for Options.Server.DrainDelay. It returns once they all have, or
// with ctx's error.
func (g *Gateway) Drain(ctx context.Context) error {
	return g.each(func(s *wymcp.Server) error { return s.Drain(ctx) })
}

// Draining reports whether a drain has begun.
func (g *Gateway) Draining() bool {
	for _, v := range g.views {
		if v.srv.Draining() {
			return true
		}
	}
	return false
}

// Shutdown shuts every view down together (wymcp.Server.Shutdown: each
// drains, stops admitting and answers every call it admitted, cutting
// the calls still running short if ctx ends), then closes the gateway:
// the watches stop and the upstreams are closed, once no call is left to
// forward. It returns the views' errors (ctx's, when the calls were cut).
func (g *Gateway) Shutdown(ctx context.Context) error {
	err := g.each(func(s *wymcp.Server) error { return s.Shutdown(ctx) })
	g.Close()
	return err
}

// each runs f on every view's server at once.
func (g *Gateway) each(f func(*wymcp.Server) error) error {
	errs := make([]error, len(g.views))
	var wg sync.WaitGroup
	for i, v := range g.views {
		wg.Go(func() { errs[i] = f(v.srv) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
