// Package gateway composes local tools and the tools of any number of
// upstream MCP servers (package upstream) into what one or more MCP
// endpoints serve: the gateway of cmd/wymcp's -upstreams, as a type an
// embedder builds in code (docs/design.md §10c).
//
// [New] connects the upstreams at once; one that cannot be reached is
// tried again in the background, with backoff, and costs only its own
// tools. Each upstream's changes are served as they come. Two tools that
// would be served under one name are decided by one rule: the first in
// order wins (the local tools, then the upstreams in the order given),
// and the later one is left out and logged; nothing fails and nothing
// else waits. Each [View] is an MCP endpoint of its own, a plain
// *wymcp.Server serving the tools its patterns pick; the Gateway routes to
// them by path, drains them together and is ready when they are.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// Options configures a Gateway.
type Options struct {
	// Info is the serverInfo of every view but one that names its own.
	// Its Name and Version are required.
	Info protocol.Implementation
	// Server configures every view's *wymcp.Server (its Auth is every
	// view's but one that sets its own). With Views, each view
	// seals requestState with keys derived from StateKeys and its path (a
	// random ring when StateKeys is nil), so that a state one view made is
	// refused by another, as a foreign one is; the derived keys are the
	// same on every replica given the same ring. Without Views, the one
	// view uses StateKeys as given, so that its states open on a plain
	// wymcp.Server with the same ring (a rolling upgrade). With Upstreams,
	// every view serves subscriptions/listen (ToolsChange is set: their
	// tools change as they come); without them the set changes only by a
	// Reload, and ToolsChange says whether the embedder will make one (a
	// view built without it never serves listen). Logger, TracerProvider and
	// MeterProvider serve the gateway's own logs and metrics too, and the
	// upstreams' where their Options leave them nil.
	Server wymcp.Options
	// Tools are the local tools, served first: an upstream's tool of the
	// same name is left out.
	Tools []*tools.Tool
	// Upstreams are connected at once, each within its ConnectTimeout.
	// Their order decides name conflicts. Names must be unique: a Reload
	// matches upstreams by name.
	Upstreams []upstream.Options
	// Views are the endpoints; nil means one view serving every tool,
	// with Path "".
	Views []View
}

// View is one MCP endpoint of the gateway: a curated subset of the served
// tools, for one team or one client, with its own serverInfo name and
// protected resource.
type View struct {
	// Path is where the view is served (the Gateway's ServeHTTP routes by
	// exact path): it starts with "/", and no two views share it. "" is
	// allowed for a single view, which then answers on any path: wherever
	// the embedder mounts the Gateway.
	Path string
	// Tools pick the view's tools among the served ones: served names, or
	// path.Match patterns over them ("github_*"). Nil or empty: every
	// tool.
	Tools []string
	// Name is the view's serverInfo name; "" means Options.Info.Name.
	Name string
	// Auth makes the view its own protected resource (its
	// Authenticator checks that tokens name the view's audience); nil
	// means Options.Server.Auth.
	Auth *wymcp.AuthOptions
	// Allow, when set, decides who may see and call each tool of the
	// view, beside the tool's own rules and its upstream's (all must
	// allow; docs/design.md §11): a tool it denies a caller is left out of
	// that caller's tools/list, and the call of it is answered as the call
	// of a tool the view does not have. RateLimit bounds the calls per
	// caller of all the view's tools together; the zero Limit is none.
	// Both are counted and asked per view: one tool served by two views
	// has each view's.
	Allow     access.Rule
	RateLimit access.Limit
}

// Gateway serves the composed tools through its views. It is an
// http.Handler; its methods are safe for concurrent use.
type Gateway struct {
	own    []*tools.Tool
	logger *slog.Logger
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	unreg  metric.Registration

	// views never change once New returns (their patterns do, under
	// mu); byPath routes to them, single is the view with Path "".
	views  []*view
	byPath map[string]*wymcp.Server
	single *wymcp.Server

	// reloading serializes Reload, the upstreams connecting late, and
	// Close after them.
	reloading sync.Mutex
	// mu guards what follows, and orders the views' SetTools: the sets
	// published last are built from the upstreams' latest tools.
	mu       sync.Mutex
	ups      []*live
	retiring map[*live]*time.Timer
	closed   bool
	// serving is the number of tools served, every view's together, for
	// readiness; leftOut the tools the conflict rule leaves out now.
	serving int
	leftOut map[conflict]bool
	// cacheTTL is the views' configured ttlMs; rereads, each upstream's
	// reading again for calls of unknown names (fresh.go).
	cacheTTL     time.Duration
	rereads      map[*upstream.Upstream]*refreshing
	unknownEvery time.Duration
	// watches is the parent of every watch's and try's context.
	watches     context.Context
	stopWatches context.CancelFunc
	wg          sync.WaitGroup
}

var _ http.Handler = (*Gateway)(nil)

// ErrClosed is Reload's error once the Gateway is closed.
var ErrClosed = errors.New("gateway: closed")

// New connects the upstreams, at once, and builds the views' servers. An
// upstream that cannot be connected within its ConnectTimeout (or before
// ctx ends) never fails New: it is logged and tried again in the
// background (a second, doubling to half a minute), its tools served once
// it connects. New fails on options that cannot be served: what
// Options.Validate refuses, what wymcp.New refuses.
// ctx bounds the connections made here, not the Gateway's life: Close
// (or Shutdown) ends it.
func New(ctx context.Context, opts Options) (*Gateway, error) {
	views, err := checkViews(opts.Views)
	if err != nil {
		return nil, err
	}
	if err := checkUpstreams(opts.Upstreams); err != nil {
		return nil, err
	}
	g := &Gateway{
		own:          slices.Clone(opts.Tools),
		logger:       opts.Server.Logger,
		tp:           opts.Server.TracerProvider,
		mp:           opts.Server.MeterProvider,
		retiring:     map[*live]*time.Timer{},
		leftOut:      map[conflict]bool{},
		byPath:       map[string]*wymcp.Server{},
		cacheTTL:     configuredTTL(opts.Server.CacheTTL),
		rereads:      map[*upstream.Upstream]*refreshing{},
		unknownEvery: unknownEvery,
	}
	if g.logger == nil {
		g.logger = slog.Default()
	}
	g.watches, g.stopWatches = context.WithCancel(context.Background())
	ups := g.connect(ctx, opts.Upstreams)

	g.mu.Lock()
	defer g.mu.Unlock()
	g.ups = ups
	ts, left := g.compose(ups)
	if err := g.build(opts, views, ts); err != nil {
		g.stopWatches()
		closeAll(ups)
		return nil, err
	}
	g.serving = len(ts)
	g.noteConflicts(left)
	g.applyTTL(ups)
	for _, l := range ups {
		if l.u != nil {
			g.logger.Info("upstream connected", l.logAttrs()...)
		}
		g.start(l)
	}
	g.unreg = g.instrument()
	return g, nil
}

// OptionError is what is wrong with one field of [Options] or of an
// [Update]: the errors of [Options.Validate], New and Reload. Field names
// it as Go writes it, with the index below it (Views[1].Path,
// Upstreams[0].Name), so that a program reading a configuration file can
// point at the key that set it.
type OptionError struct {
	Field   string
	Problem string
}

func (e *OptionError) Error() string { return "gateway: " + e.Field + ": " + e.Problem }

// Validate reports the first thing wrong with o's Views and its
// Upstreams, as an [*OptionError]: what New refuses before it
// connects anything. A view's Path must be a clean absolute path of
// letters, digits, '-', '.', '_', '~' and '/' (what http.ServeMux takes
// as a plain path: no method, host or wildcard, nothing it would
// redirect), unique, and may be "" only when it is the one view; a tool
// pattern must be a served name or a pattern path.Match reads. An upstream
// needs a name of its own: a Reload tells them apart by it, and logs and
// metrics name them so. Each upstream's other options are
// upstream.Options.Validate's, and checked by it (as Upstreams[i].Field).
func (o *Options) Validate() error {
	if _, err := checkViews(o.Views); err != nil {
		return err
	}
	return checkUpstreams(o.Upstreams)
}

// checkViews checks the views' paths and patterns and returns them, or
// the one view of every tool when there are none.
func checkViews(vs []View) ([]View, error) {
	if len(vs) == 0 {
		return []View{{}}, nil
	}
	seen := map[string]bool{}
	for i, v := range vs {
		bad := func(problem string) error { return &OptionError{fmt.Sprintf("Views[%d].Path", i), problem} }
		switch {
		case v.Path == "" && len(vs) > 1:
			return nil, bad("is required when there is more than one view")
		case v.Path != "" && (path.Clean(v.Path) != v.Path || v.Path[0] != '/' || strings.Trim(v.Path, pathChars) != ""):
			return nil, bad(fmt.Sprintf("%q is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'", v.Path))
		case seen[v.Path]:
			return nil, bad(fmt.Sprintf("%q is another view's", v.Path))
		}
		seen[v.Path] = true
		if err := checkPatterns(i, v.Tools); err != nil {
			return nil, err
		}
		if err := checkGuard(i, v); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// checkGuard refuses a RateLimit of Views[i] that could not be counted.
func checkGuard(i int, v View) error {
	if err := v.RateLimit.Validate(); err != nil {
		return &OptionError{fmt.Sprintf("Views[%d].RateLimit", i), err.Error()}
	}
	return nil
}

// pathChars are those of a view's path.
const pathChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/"

// checkPatterns refuses a pattern of Views[i] that path.Match cannot
// read, or "", which no tool is named.
func checkPatterns(i int, ps []string) error {
	for j, p := range ps {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return &OptionError{fmt.Sprintf("Views[%d].Tools[%d]", i, j), fmt.Sprintf("%q is not a served name nor a path.Match pattern", p)}
		}
	}
	return nil
}

// checkUpstreams refuses an upstream without a name, or two of one name,
// then options Connect would refuse (upstream.Options.Validate): an
// upstream that can never connect is the caller's mistake, not an
// upstream down to be tried again forever.
func checkUpstreams(list []upstream.Options) error {
	seen := make(map[string]bool, len(list))
	for i, o := range list {
		field := fmt.Sprintf("Upstreams[%d].Name", i)
		switch {
		case o.Name == "":
			return &OptionError{field, "is required"}
		case seen[o.Name]:
			return &OptionError{field, fmt.Sprintf("%q is another upstream's", o.Name)}
		}
		seen[o.Name] = true
	}
	for i, o := range list {
		var oe *upstream.OptionError
		if err := o.Validate(); errors.As(err, &oe) {
			return &OptionError{fmt.Sprintf("Upstreams[%d].%s", i, oe.Field), oe.Problem}
		} else if err != nil {
			return fmt.Errorf("gateway: Upstreams[%d]: %w", i, err)
		}
	}
	return nil
}

// build makes the views' servers from the served tools ts; g.mu is held.
func (g *Gateway) build(opts Options, vs []View, ts []*tools.Tool) error {
	ring, err := stateRing(opts)
	if err != nil {
		return err
	}
	var limiter access.Limiter
	for _, v := range vs {
		info := opts.Info
		if v.Name != "" {
			info.Name = v.Name
		}
		so := opts.Server
		if v.Auth != nil {
			so.Auth = v.Auth
		}
		if len(opts.Views) > 0 {
			so.StateKeys = viewKeys(ring, v.Path)
		}
		// An upstream's tools change as they come: every view serves
		// listen (fresh.go). Without upstreams the set changes only by a
		// Reload, which the embedder says it will make with ToolsChange.
		so.ToolsChange = so.ToolsChange || len(opts.Upstreams) > 0
		if so.Limiter == nil {
			// One for every view: an upstream's limit counts its calls
			// through any view alike.
			if limiter == nil {
				limiter = access.NewLimiter(0)
			}
			so.Limiter = limiter
		}
		w := &view{path: v.Path, sel: selectionOf(v), ttl: g.cacheTTL}
		so.UnknownTool = func(ctx context.Context, name string) bool { return g.unknown(ctx, w, name) }
		picked, guarded := pick(ts, w.sel, v.Path, nil, false)
		srv, err := wymcp.New(info, &so, picked...)
		if err != nil {
			for _, w := range g.views {
				_ = w.srv.Shutdown(context.Background())
			}
			if v.Path != "" {
				err = fmt.Errorf("view %s: %w", v.Path, err)
			}
			return err
		}
		w.srv, w.tools, w.guarded, w.ready = srv, picked, guarded, srv.ReadinessHandler()
		g.views = append(g.views, w)
		if v.Path == "" {
			g.single = srv
		} else {
			g.byPath[v.Path] = srv
		}
	}
	return nil
}

// ServeHTTP routes a request to the view whose Path is the request's,
// exactly (no prefix or trailing-slash matching), and answers 404
// otherwise; a single view with Path "" takes every request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s := g.route(r.URL.Path); s != nil {
		s.ServeHTTP(w, r)
		return
	}
	http.NotFound(w, r)
}

// View returns the server of the view at path ("" without Views), or nil
// when there is none: for an embedder who mounts each view on a mux of
// its own, beside its own handlers (the resource metadata of a view's
// auth, say). Drain and shut it down through the Gateway.
func (g *Gateway) View(path string) *wymcp.Server {
	if g.single != nil && path != "" {
		return nil
	}
	return g.route(path)
}

// route is the server of a request to path: a map read, no allocation
// (the hot path is the view's).
func (g *Gateway) route(path string) *wymcp.Server {
	if g.single != nil {
		return g.single
	}
	return g.byPath[path]
}
