// Package wymcp serves the Model Context Protocol, revision 2026-07-28 (the
// stateless revision), for tools, over Streamable HTTP.
//
// A *Server is an http.Handler: mount it at the path you choose on the mux
// you already have. Each POST carries one JSON-RPC message; the server
// answers server/discover, tools/list and tools/call (and initialize and
// ping for the 2025 revisions Options.Versions lists, and
// subscriptions/listen when Options.ToolsChange says the set may change),
// and refuses everything else with the answer docs/design.md §5 specifies. Tools are
// built with package tools, typed (schemas inferred from Go types) or raw
// (a JSON Schema kept byte-for-byte); a server serves those given to New
// until Server.SetTools replaces them.
package wymcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/actors"
	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/reqstate"
	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/transport"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The defaults that zero fields of Options stand for, each stated on its
// field; defined here and nowhere else (New resolves them once).
const (
	defaultPageSize = 100
	// A served tool set changes only with a deploy or a SetTools (a
	// gateway's, when an upstream's tools change), and no client is told
	// of a change (no listChanged): this is how long a list it caches may
	// stay stale then.
	defaultCacheTTL = 5 * time.Minute
	// The limit of the TypeScript SDK.
	defaultMaxBodyBytes = 4 << 20
	// High enough that only a flood reaches it, low enough that a flood
	// cannot grow memory without bound.
	defaultMaxInFlight = 4096
	// Long enough for a 4 MiB answer over a slow link, short enough that a
	// stalled reader lets go of its place.
	defaultWriteTimeout = 30 * time.Second
	// The least body budget: what answers waiting for slow readers may
	// hold is of the order of what bodies being read may.
	defaultAnswerBudget = 64 << 20
	// Time enough for a person to answer a form, and the "short expiry" the
	// spec asks for, past which a leaked state is worthless.
	defaultStateTTL = 5 * time.Minute
	// Listen streams (docs/design.md §5a): each holds a goroutine, the
	// connection's buffers and a few frames, some 20 KiB, so the total
	// bounds them near 20 MiB; a client needs one, and the per-caller
	// bound leaves room for a client that reconnects before its old
	// stream is found dead, without letting one caller take them all.
	defaultMaxListenStreams          = 1024
	defaultMaxListenStreamsPerCaller = 16
)

// Options configures a Server. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// Instructions, when set, is returned by server/discover (and by a 2025
	// client's initialize): guidance for the model on how to use the tools.
	Instructions string
	// Versions are the protocol revisions served. Nil means 2026-07-28
	// alone: a 2025-era client's initialize is then answered -32022 naming
	// it. Listing "2025-11-25" or "2025-06-18" too serves clients of that
	// revision on the same endpoint, statelessly (docs/design.md §1a): their
	// initialize negotiates, then ping, tools/list and tools/call answer in
	// that revision's shapes, and a tool that asks for input sends that
	// era's requests to the client on the call's stream. 2026-07-28 must be
	// listed; an unknown revision, or one listed twice, fails New.
	Versions []string
	// PageSize is the number of tools per tools/list page; 0 means 100.
	PageSize int
	// CacheTTL is the ttlMs of server/discover and tools/list; 0 means 5
	// minutes; negative means 0 (results are stale at once). The tool set
	// changes only with a deploy or a Server.SetTools, and clients learn of
	// a change only when their cached list expires: a server whose tools
	// change while it runs (a gateway) may want it shorter.
	CacheTTL time.Duration
	// CursorSecret keys the tools/list cursors' MAC (tamper evidence).
	// Replicas behind one load balancer must share it; nil is a valid key
	// (cursors then still fail after any change to the tool set).
	CursorSecret []byte
	// MaxBodyBytes bounds a request body; 0 means 4 MiB, the
	// limit of the TypeScript SDK.
	MaxBodyBytes int64
	// MaxInFlight bounds requests being answered at once; past it the
	// answer is 503 with Retry-After, at once. 0 means 4096;
	// negative means unbounded.
	MaxInFlight int
	// WriteTimeout bounds the sending of one answer (each frame of a
	// progress stream), not the tool's work, so a client that stops reading
	// cannot keep its in-flight place; 0 means 30 s;
	// negative means no bound.
	WriteTimeout time.Duration
	// AnswerBudget bounds the bytes of tools/call answers held at once for
	// their clients, so that clients that do not read their answers cannot
	// make the server hold them without bound (docs/design.md §3, stage
	// 7). Each call reserves its tool's recent answer size before the tool
	// runs, and a call the budget cannot take within about a second is
	// answered 503 with Retry-After, its tool not run; an answer larger
	// than its reservation is still written. Answers under 2 KiB are not
	// counted. 0 means 64 MiB; negative means no bound.
	AnswerBudget int64
	// DrainDelay is how long a drain (Drain, or Shutdown when Drain was not
	// called) keeps the server a lame duck before Shutdown stops admitting
	// calls: not ready (ReadinessHandler answers 503), every answer with
	// "Connection: close", calls still admitted and answered. It is the
	// time a load balancer needs to stop sending calls here: for one that
	// probes readiness, its probe interval × failures + propagation; for a
	// proxy holding keep-alive connections, more than its idle timeout for
	// them (docs/design.md §6a; deploy/README.md has the timeline).
	//
	// 0 or negative means none, which is the default: Shutdown then stops
	// admitting at once, as it did before DrainDelay existed. The default is none because the right value belongs to the
	// deployment, not the library, and a delay nobody asked for would hold every
	// Shutdown (tests' included) for nothing; cmd/wymcp's -drain-delay
	// defaults to 5 s.
	DrainDelay time.Duration
	// AllowedOrigins are the browser origins allowed besides loopback ones.
	AllowedOrigins []string
	// AllowedHosts are Host values allowed besides loopback names on a
	// loopback listener (DNS-rebinding protection); on other listeners, when
	// set, the only ones allowed.
	AllowedHosts []string
	// TrustedProxies are the proxies (nginx, a load balancer) whose
	// X-Forwarded-For the server believes: a request from one of them is
	// taken to come from the address they forwarded for, read from the
	// header's right end. Where the server tells callers without auth
	// apart (a rate limit, MaxListenStreamsPerCaller, an upstream's
	// per-caller children, fair shares and circuit breaker,
	// docs/design.md §10b and §11), it is by that address. Nil believes no
	// header: behind a proxy, every caller then has the proxy's address.
	TrustedProxies []netip.Prefix
	// StateKeys seal the requestState of multi-round-trip tool calls (see
	// tools.Ask): AES-256 keys of 32 bytes, newest first. New
	// states are sealed with the first key; a state sealed with any of them
	// opens. To rotate, put a new key first, and drop the oldest once
	// StateTTL has passed. Replicas behind one load balancer must share the
	// ring: any of them then serves any round of any call, and none keeps
	// state. Nil means one random key made by New: every round must then
	// reach this Server value, and no call survives a restart. A key of
	// another size, or one key twice, fails New. The slices are copied.
	StateKeys [][]byte
	// StateTTL is how long a requestState stays valid after the round that
	// made it: the client's time to answer. A retry after it is refused
	// (-32602) and the call must start over. 0 means 5 minutes:
	// time enough for a person to answer a form, and the short expiry the
	// spec asks for; negative fails New.
	StateTTL time.Duration
	// TracerProvider and MeterProvider receive spans and metrics; nil means
	// the OpenTelemetry globals (no-ops until an SDK is installed).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Logger receives contained faults at Error; nil means slog.Default().
	Logger *slog.Logger
	// Auth, when set, authenticates every request with its Authenticator
	// and enforces the scopes of the server and of each tool
	// (docs/design.md §6); nil serves every request unauthenticated. A
	// tool set with a scoped tool (tools.WithScopes) needs it.
	Auth *AuthOptions
	// ToolsChange says the tool set may change while the server serves
	// (SetTools: a gateway whose upstreams' tools change, a reload). A
	// client then needs to hear of a change sooner than the list's ttlMs,
	// so the server advertises tools.listChanged in server/discover and
	// serves subscriptions/listen to 2026-07-28 clients: a stream,
	// acknowledged first, on which each SetTools that changes what
	// tools/list shows is told within a second (notifications/tools/
	// list_changed), until the client leaves or a drain ends it with its
	// result (docs/design.md §5a). False, the default, suits a fixed set:
	// nothing is advertised and subscriptions/listen answers -32601, as
	// for any method the server does not have. 2025-era clients are
	// served as without it (their initialize says listChanged false).
	ToolsChange bool
	// MaxListenStreams bounds the listen streams open at once (with
	// ToolsChange); past it a listen is answered 503 with Retry-After.
	// Streams do not take MaxInFlight's places: they are idle nearly all
	// their life. 0 means 1024; negative means no bound.
	MaxListenStreams int
	// MaxListenStreamsPerCaller bounds the listen streams one caller holds
	// at once: the authenticated caller (Principal.Subject, else its
	// client), or without auth the client's address (TrustedProxies: behind
	// a proxy, set it, or every client counts as the proxy). Past it a
	// listen is answered 429. 0 means 16; negative means no bound.
	MaxListenStreamsPerCaller int
	// UnknownTool, when set, is asked about a tools/call naming a tool the
	// server does not have, before the call is answered as unknown: a
	// gateway whose set may lag another replica's reads its upstreams
	// again (docs/design.md §10e). It returns once the set has been
	// replaced (SetTools) or the wait is over, and reports whether the
	// set may now hold the name, which is then looked up once more; a
	// tool found is authorized as any (its scopes) and served, otherwise
	// the call is answered as unknown, as without it. It is asked past
	// auth (a request auth refuses never reaches it), on the request's
	// goroutine, holding no in-flight place, by at most half MaxInFlight
	// requests at once (past that a name is answered as unknown without
	// asking), and must bound its own wait and rate (ctx is the
	// request's). Calls of known tools, and of tools
	// auth hides from the caller, never reach it.
	UnknownTool func(ctx context.Context, name string) bool
	// Limiter counts the calls of the tools' rate limits
	// (tools.WithRateLimit; an upstream's or a view's, package gateway),
	// per caller (docs/design.md §11); nil means access.NewLimiter(0), which
	// counts in this process only. A server whose tools have no limit never
	// calls it.
	Limiter access.Limiter
}

// Server is an MCP endpoint. It is an http.Handler, safe for concurrent use.
type Server struct {
	handler *transport.Handler
	system  *actors.System
	drain   drain
	// auth is the auth stage, nil when auth is off; swap serializes
	// SetTools.
	auth *authStage
	swap sync.Mutex
}

var _ http.Handler = (*Server)(nil)

// New builds a server for the given tools. Everything that can be wrong
// with the tool set (a duplicate name, a bad schema) fails New, not a
// request: schemas are compiled and the server/discover and tools/list
// answers encoded here, once.
func New(info protocol.Implementation, opts *Options, ts ...*tools.Tool) (*Server, error) {
	if info.Name == "" || info.Version == "" {
		return nil, errors.New("wymcp: the server Implementation needs a name and a version")
	}
	set, err := newSet(ts)
	if err != nil {
		return nil, err
	}
	cfg, stage, err := opts.resolve(info, set)
	if err != nil {
		return nil, err
	}
	sys, err := actors.New(cfg)
	if err != nil {
		return nil, err
	}
	obs := telemetry.New(telemetry.Options{
		TracerProvider: cfg.TracerProvider,
		MeterProvider:  cfg.MeterProvider,
		Logger:         cfg.Logger,
		Versions:       cfg.Versions,
	})
	h := transport.New(cfg, sys, obs)
	return &Server{handler: h, system: sys, auth: stage, drain: drain{delay: cfg.DrainDelay}}, nil
}

// newSet compiles ts into a tool set.
func newSet(ts []*tools.Tool) (*toolrun.Set, error) {
	compiled := make([]*toolrun.Tool, len(ts))
	for i, t := range ts {
		compiled[i] = toolrun.Of(t)
	}
	return toolrun.NewSet(compiled...)
}

// unscoped refuses a scoped tool on a server without an authenticator: no
// caller holds a scope, so it could be neither called nor listed. Say so
// now, not per request.
func unscoped(set *toolrun.Set) error {
	for _, t := range set.Tools() {
		if len(t.Scopes()) > 0 {
			return fmt.Errorf("wymcp: tool %q requires scopes %q, but Options.Auth is nil (no caller could be granted them)", t.Name(), t.Scopes())
		}
	}
	return nil
}

// SetTools replaces the server's tools while it serves, as a gateway does
// when an upstream's tools change (package upstream). What New checks of a
// tool set, SetTools checks, and on an error nothing changes. The new
// tools/list is built and published at once; a call already under way
// runs to its end with the tool it named, and the next request sees the
// new set. A tools/list cursor of the old set is refused (-32602): the
// client lists again from the start. Calls of SetTools are serialized.
func (s *Server) SetTools(ts ...*tools.Tool) error {
	set, err := newSet(ts)
	if err != nil {
		return err
	}
	s.swap.Lock()
	defer s.swap.Unlock()
	if s.auth == nil {
		if err := unscoped(set); err != nil {
			return err
		}
	} else {
		// The needs first: a call resolved in the new set finds its tool's.
		s.auth.setTools(set)
	}
	return s.handler.SetTools(set)
}

// SetCacheTTL makes d the ttlMs of tools/list answers from now on (negative
// means 0), in place of Options.CacheTTL: a gateway whose upstreams'
// tools may change sooner than that says so, so that no client caches a
// list longer than the set behind it holds (docs/design.md §10e). The
// tools are the same, so no listen stream is told; server/discover keeps
// Options.CacheTTL (it names no tool). Serialized with SetTools.
func (s *Server) SetCacheTTL(d time.Duration) error {
	s.swap.Lock()
	defer s.swap.Unlock()
	return s.handler.SetListTTL(d)
}

// resolve returns the configuration o stands for: every zero field replaced
// by its default, once, here (a nil o is all defaults). It fails on
// options that cannot be served as written.
func (o *Options) resolve(info protocol.Implementation, set *toolrun.Set) (cfg *config.Server, stage *authStage, err error) {
	if o == nil {
		o = &Options{}
	}
	versions, err := wire.NewVersions(o.Versions)
	if err != nil {
		return nil, nil, fmt.Errorf("wymcp: Options.Versions: %w", err)
	}
	cfg = &config.Server{
		Versions:       versions,
		Info:           info,
		Instructions:   o.Instructions,
		Tools:          set,
		PageSize:       o.PageSize,
		CacheTTL:       o.CacheTTL,
		CursorSecret:   o.CursorSecret,
		MaxBodyBytes:   o.MaxBodyBytes,
		MaxInFlight:    int64(o.MaxInFlight),
		WriteTimeout:   o.WriteTimeout,
		AnswerBudget:   o.AnswerBudget,
		TrustedProxies: o.TrustedProxies,
		DrainDelay:     max(o.DrainDelay, 0),
		AllowedOrigins: o.AllowedOrigins,
		AllowedHosts:   o.AllowedHosts,
		TracerProvider: o.TracerProvider,
		MeterProvider:  o.MeterProvider,
		Logger:         o.Logger,
		Workers:        runtime.GOMAXPROCS(0),
		ToolsChange:    o.ToolsChange,
		UnknownTool:    o.UnknownTool,
	}
	cfg.MaxListenStreams = orDefault(o.MaxListenStreams, defaultMaxListenStreams)
	cfg.MaxListenStreamsPerCaller = orDefault(o.MaxListenStreamsPerCaller, defaultMaxListenStreamsPerCaller)
	if cfg.PageSize <= 0 {
		cfg.PageSize = defaultPageSize
	}
	switch {
	case cfg.CacheTTL == 0:
		cfg.CacheTTL = defaultCacheTTL
	case cfg.CacheTTL < 0:
		cfg.CacheTTL = 0
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBodyBytes
	}
	switch {
	case cfg.MaxInFlight == 0:
		cfg.MaxInFlight = defaultMaxInFlight
	case cfg.MaxInFlight < 0:
		cfg.MaxInFlight = 0 // unbounded
	}
	switch {
	case cfg.AnswerBudget == 0:
		cfg.AnswerBudget = defaultAnswerBudget
	case cfg.AnswerBudget < 0:
		cfg.AnswerBudget = 0 // no bound
	}
	switch {
	case cfg.WriteTimeout == 0:
		cfg.WriteTimeout = defaultWriteTimeout
	case cfg.WriteTimeout < 0:
		cfg.WriteTimeout = 0 // no bound
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Access = newAccessStage(o.Limiter, cfg.Logger)
	if o.Auth != nil {
		if cfg.Auth, stage, err = o.Auth.resolve(set); err != nil {
			return nil, nil, err
		}
	} else if err := unscoped(set); err != nil {
		return nil, nil, err
	}
	switch {
	case o.StateTTL == 0:
		cfg.StateTTL = defaultStateTTL
	case o.StateTTL < 0:
		return nil, nil, fmt.Errorf("wymcp: Options.StateTTL %v is negative", o.StateTTL)
	default:
		cfg.StateTTL = o.StateTTL
	}
	for i, k := range o.StateKeys {
		if len(k) != reqstate.KeySize {
			return nil, nil, fmt.Errorf("wymcp: Options.StateKeys[%d] is %d bytes; each key must be %d bytes (AES-256)", i, len(k), reqstate.KeySize)
		}
		cfg.StateKeys = append(cfg.StateKeys, bytes.Clone(k))
	}
	if len(cfg.StateKeys) == 0 {
		// No ring given: one key for this Server's life (see StateKeys).
		key := make([]byte, reqstate.KeySize)
		rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
		cfg.StateKeys = [][]byte{key}
	}
	return cfg, stage, nil
}

// orDefault resolves a bound whose 0 means def and whose negative value
// means none (0 in the configuration).
func orDefault(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// ServeHTTP answers one MCP message.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }
