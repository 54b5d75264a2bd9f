// Package upstream serves the tools of another MCP server as tools of a
// wymcp server: the gateway half of wymcp (docs/design.md §10).
//
// [Connect] reaches an upstream MCP server over Streamable HTTP, negotiates
// its revision (2026-07-28 through server/discover; otherwise initialize,
// with 2025-11-25 or 2025-06-18 and an upstream session kept by this
// process), and reads every page of its tools/list. [Upstream.Tools]
// returns them as ordinary tools for wymcp.New, under served names that
// carry the configured prefix, or the names the operator gave them
// ([Options.Overrides]). A call of one is forwarded: the client's
// arguments as it sent them, its progress token, its cancellation and the
// trace context go upstream, and the upstream's result comes back as its
// bytes. A multi-round-trip call passes through, the upstream's
// requestState sealed inside the server's own. Every other upstream
// outcome has one specified answer (docs/design.md §10a).
//
// An upstream may also be a program the gateway runs and speaks MCP to on
// its stdin and stdout ([Options.Command]), supervised and restarted
// (docs/design.md §10d). Its child's parent is a reaper: the program's own
// executable (/proc/self/exe) started again, which this package's init
// turns into the reaper before main runs, whatever program embeds the
// library; nothing is the embedder's to call. The package inits that run
// before this package's (its dependencies') run in the reaper too, so
// they must do nothing outside their process.
//
// The upstream is called with the gateway's own [Credentials], never the
// client's token. A circuit breaker answers a dead upstream's tools at
// once, and lets a call through now and then to learn when it is back; a
// slow upstream holds only its own calls, up to [Options.MaxInFlight].
package upstream

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// Override changes how one upstream tool is served: the operator's word
// over the upstream's, for a name that clashes or reads badly to a model,
// a description that misleads, or hints the operator does not trust. Any
// zero field keeps the upstream's. Leaving a tool out is
// [Options.Exclude]'s.
type Override struct {
	// Name is the whole served name: Prefix is not added to it, so the
	// operator chooses every byte. It must be 1 to 64 characters of A-Z
	// a-z 0-9 _ . - (what model APIs accept); a tool whose override names
	// anything else is left out and logged. The tool is called under this
	// name, and the gateway's spans, metrics, logs and answers name it so;
	// the upstream is still called with its own name. An explicit Name
	// takes its name from any tool of the same upstream that Prefix would
	// give it to: that tool is left out and logged, as is the later (in
	// the upstream's order) of two tools whose overrides name the same.
	Name string
	// Title and Description replace the upstream's when not "".
	Title, Description string
	// Annotations, when not nil, replace the upstream's hints entirely (no
	// hint of the upstream's is kept): the hints are the upstream's word,
	// and these are the operator's. Retries (RetryIdempotent) trust the
	// served hints, so these.
	Annotations *protocol.ToolAnnotations
	// Allow, when set, decides who may see and call this tool, beside the
	// upstream's Allow (both must allow); RateLimit bounds this tool's
	// calls per caller (docs/design.md §11). A tool a rule denies a caller
	// is left out of its tools/list and its call answered as an unknown
	// tool's.
	Allow     access.Rule
	RateLimit access.Limit
}

// Options configures one upstream. The zero value of every field but Name
// and URL (or Command) is a usable default.
type Options struct {
	// Name names the upstream in the answers of its failed calls, in
	// spans, metrics and logs. Required.
	Name string
	// URL is the upstream's MCP endpoint (http or https). Exactly one of
	// URL and Command is required.
	URL string
	// Command makes the upstream a program the gateway runs and speaks
	// MCP to over its stdin and stdout (the stdio transport), as most
	// published MCP servers are: the program's path, or a name looked up
	// in the child's PATH. It is run without a shell, with Args, in Dir,
	// under a supervisor that restarts it when it exits or stops
	// answering (docs/design.md §10d). Linux only.
	Command string
	// Args are the program's arguments, each passed as it is, but for
	// "${WYMCP_CALLER}", which is replaced (here and in Env's values) by
	// "shared", or with PerCaller by the caller's tag (16 hex digits of a
	// hash of its identity): a server that keeps its state in a file then
	// keeps each caller's in a file of its own.
	Args []string
	// Env is the child's whole environment, with PATH (the gateway's own,
	// unless Env sets it) and the variables InheritEnv names: the child
	// gets nothing else of the gateway's environment, whose secrets are
	// not the child's.
	Env map[string]string
	// InheritEnv names variables of the gateway's environment the child
	// gets too, when set there (Env's value wins); "*" passes the whole
	// environment, for an operator who wants it so.
	InheritEnv []string
	// Dir is the child's working directory, an absolute path; "" means
	// the gateway's.
	Dir string
	// PerCaller runs a child for each caller (its identity, or without
	// auth its address: docs/design.md §10b), started at its first call,
	// rather than one shared by all: for a server that keeps state of its
	// callers (a memory, a browser session), which would otherwise be
	// every caller's. The gateway's own requests (tools/list) go to a
	// shared child. At most MaxCallers children (0 means 64) run at once;
	// a new caller takes the place of the longest idle one, and a child
	// idle for five minutes is stopped. With a URL, an upstream spoken to
	// in a 2025 revision gives each caller a session of its own instead
	// (its own initialize; DELETE when evicted or idle), bounded the same
	// way; a 2026-07-28 upstream keeps no sessions, and PerCaller changes
	// nothing there (docs/design.md §10d).
	PerCaller  bool
	MaxCallers int
	// Prefix goes before each upstream tool's name to make its served
	// name; "" serves the names as they are. See [Upstream.Tools] for how
	// a name that would be invalid or longer than 64 characters is made
	// valid.
	Prefix string
	// Include and Exclude filter the upstream's tools by name (the
	// upstream's, before the prefix), with path.Match patterns: a tool is
	// served when it matches some Include pattern (or Include is empty)
	// and no Exclude pattern.
	Include, Exclude []string
	// Overrides change how tools are served, by the upstream's name of the
	// tool (before Prefix): their names, titles, descriptions and hints
	// (Override). An override of a tool the upstream does not list is
	// logged at each tools/list that changes, not refused: the upstream
	// may list it later. Connect copies the map.
	Overrides map[string]Override
	// Scopes are OAuth scopes a caller needs for every tool of the
	// upstream; ToolScopes adds scopes per tool, by the upstream's name.
	Scopes     []string
	ToolScopes map[string][]string
	// Allow, when set, decides who may see and call each tool of the
	// upstream (docs/design.md §11): a tool it denies a caller is left out
	// of that caller's tools/list, and the caller's call of it is answered
	// as the call of a tool the server does not have. Package
	// github.com/wymcp/wymcp/policy compiles one from CEL.
	Allow access.Rule
	// RateLimit bounds the calls per caller of all the upstream's tools
	// together (docs/design.md §11), counted by the serving
	// wymcp.Options.Limiter; the zero Limit is none.
	RateLimit access.Limit
	// Credentials authenticate the gateway to the upstream; nil sends
	// none.
	Credentials Credentials
	// AllowCleartextCredentials lets Connect send Credentials over plain
	// http to a host that is not loopback (URL, or the credentials' token
	// endpoint): without it Connect refuses such an upstream before any
	// connection, since the gateway's secret, and for TokenExchange the
	// caller's token, would travel unencrypted. Set it only where the
	// network is encrypted underneath (a service mesh, a VPN).
	AllowCleartextCredentials bool
	// Versions are the revisions the gateway may speak to the upstream,
	// in order of preference; nil means all it knows: 2026-07-28,
	// 2025-11-25, 2025-06-18.
	Versions []string

	// CallTimeout bounds one forwarded call (the served tool's deadline);
	// 0 means 60 seconds.
	CallTimeout time.Duration
	// ConnectTimeout bounds Connect's exchanges (negotiation and every
	// page of tools/list), and a 2025-era upstream's new session; 0 means
	// 10 seconds.
	ConnectTimeout time.Duration
	// MaxConns bounds the gateway's connections to the upstream that carry
	// requests and their answers; 0 means 64. The messages that have no
	// answer (a cancellation, the gateway's reply to a 2025-era upstream's
	// request) go on connections of their own, at most MaxInFlight of them.
	// It applies to the HTTP client Connect makes, not to HTTPClient.
	MaxConns int
	// MaxInFlight bounds the calls forwarded at once; a call past it is
	// answered at once, as a tool error; 0 means 256.
	MaxInFlight int
	// MaxResponseBytes bounds one message from the upstream (an answer, or
	// one event of its stream), the answer's headers counted in it; a
	// larger one is refused, not buffered; 0 means 4 MiB.
	MaxResponseBytes int64
	// MaxResponseHeaderBytes bounds the headers of an answer of the
	// upstream's, as net/http reads them: past it the answer is refused
	// before the gateway holds it. 0 means 64 KiB, and it is never more
	// than MaxResponseBytes. It applies to the HTTP client Connect makes,
	// not to HTTPClient (whose transport's own MaxResponseHeaderBytes
	// does), though the headers count against MaxResponseBytes with any.
	MaxResponseHeaderBytes int64
	// The circuit breaker opens on evidence that the upstream as a whole
	// is down (docs/design.md §10b): over the last ten seconds, at least
	// BreakerMinCalls calls, half of them or more failed by the upstream
	// itself (unreachable, HTTP 5xx, a malformed answer), those failures
	// spread over a second or more and reported by more than one caller.
	// Open, its calls are answered at once, and the gateway probes the
	// upstream every BreakerProbeInterval; the first answer closes it.
	// 0 means 20 calls and 500 milliseconds; a negative BreakerMinCalls
	// turns the breaker off.
	BreakerMinCalls      int
	BreakerProbeInterval time.Duration
	// RetryIdempotent allows a call that failed after it may have reached
	// the upstream (a broken connection; a proxy's 502, 503 or 504) to be
	// made once more, if its tool's annotations say it is read-only or
	// idempotent: they are the upstream's word, and this is the operator's
	// trust in it (an Override's Annotations, when set, are the operator's
	// own word, and are what is trusted). Retries stay within a budget: a
	// fifth of the calls, with bursts of a quarter of MaxInFlight (at least
	// 10). A call that never reached the upstream (no connection could be
	// made) is retried once whatever this says.
	RetryIdempotent bool
	// Refresh is how often Watch reads the upstream's tools/list again; 0
	// means at the upstream's ttlMs (how long it says the list may be
	// cached), at least a second apart, or a minute when it gives none.
	Refresh time.Duration
	// IdleTimeout closes a connection to the upstream idle that long, so
	// that the gateway does not send a call on one the upstream is
	// closing; 0 means 4 seconds, below common servers' keep-alive
	// (Node's is 5). It applies to the HTTP client Connect makes.
	IdleTimeout time.Duration

	// HTTPClient sends the requests; nil means a client of the upstream's
	// own, with MaxConns. It must not follow redirects to another host
	// with the gateway's credentials: the default follows none.
	HTTPClient *http.Client
	// TracerProvider and MeterProvider record the CLIENT span around each
	// hop, mcp.client.operation.duration and wymcp.upstream.failures; nil
	// means OpenTelemetry's global providers.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Logger records tools left out, sessions re-established and the
	// failed calls (throttled: docs/telemetry.md); nil means
	// slog.Default().
	Logger *slog.Logger

	// callerIdle is how long a caller's child or session may go unused
	// before it is ended (PerCaller); 0 means defaultCallerIdle. Only
	// tests set it (export_test.go), each for its own upstream.
	callerIdle time.Duration
}

// Upstream is a connected upstream MCP server. Its methods are safe for
// concurrent use.
type Upstream struct {
	c    *client
	opts Options
	// tools are the served tools, and raw the tools/list they were built
	// from; mu serializes Refresh. ttl is the last tools/list's ttlMs, as
	// nanoseconds: read without mu, since RefreshInterval must not wait
	// for a tools/list under way (a gateway asks it under its own lock).
	mu    sync.Mutex
	tools atomic.Pointer[[]*tools.Tool]
	raw   []byte
	ttl   atomic.Int64
}

// Connect reaches the upstream, negotiates its revision and reads its
// tools. ctx bounds the whole of it (and Options.ConnectTimeout each
// exchange); it does not bound the Upstream afterwards. Before any
// connection it refuses options that [Options.Validate] refuses (among
// them credentials that would go over plain http to a host that is not
// loopback).
func Connect(ctx context.Context, opts Options) (*Upstream, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	c, err := newClient(opts)
	if err != nil {
		return nil, err
	}
	// The overrides are read at each refresh: a caller changing its map
	// afterwards must not race with one.
	opts.Overrides = maps.Clone(opts.Overrides)
	// Connect's requests are the gateway's own, on no caller's behalf.
	ctx = own(ctx)
	if c.stdio != nil {
		// The child's actor negotiates with each child it starts.
		err = c.stdio.open(ctx)
	} else {
		err = c.negotiate(ctx)
	}
	if err != nil {
		if c.stdio != nil {
			c.close()
		}
		return nil, fmt.Errorf("upstream %s: %w", opts.Name, err)
	}
	u := &Upstream{c: c, opts: opts}
	if _, err := u.refresh(ctx); err != nil {
		c.close()
		return nil, err
	}
	return u, nil
}

// Refresh reads the upstream's tools/list again, and reports whether it
// changed; when it did, [Upstream.Tools] returns the new tools from then
// on (give them to wymcp.Server.SetTools). On an error the tools are
// unchanged.
func (u *Upstream) Refresh(ctx context.Context) (changed bool, err error) {
	return u.refresh(own(ctx))
}

func (u *Upstream) refresh(ctx context.Context) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	list, err := u.c.listTools(ctx)
	if err != nil {
		return false, fmt.Errorf("upstream %s: tools/list: %w", u.opts.Name, err)
	}
	u.ttl.Store(int64(list.ttl))
	if u.tools.Load() != nil && bytes.Equal(list.raw, u.raw) {
		return false, nil
	}
	ts, err := u.c.serve(list.tools, u.opts)
	if err != nil {
		return false, fmt.Errorf("upstream %s: %w", u.opts.Name, err)
	}
	u.raw = list.raw
	u.tools.Store(&ts)
	return true, nil
}

// Watch refreshes the upstream's tools until ctx ends, and calls changed
// with them each time they change, or the interval at which they are
// read (RefreshInterval) changes, so that a gateway can tell its clients
// how long its list holds. It refreshes every RefreshInterval, and at once
// when the upstream's change stream tells of a change, where it offers
// one (its subscriptions/listen at 2026-07-28, over HTTP or a child's
// pipe; its GET stream in a 2025 session, a 2025 child's stdout; when it
// advertises tools.listChanged): the stream is opened
// again with backoff when it fails, and polling goes on meanwhile
// (docs/design.md §10e). A refresh that fails is logged, and the tools
// stay as they were until one succeeds. It returns once ctx has ended and
// the stream is closed.
func (u *Upstream) Watch(ctx context.Context, changed func([]*tools.Tool)) {
	kick := make(chan struct{}, 1)
	if u.c.listChanged {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			u.follow(ctx, kick)
		}()
	}
	var told time.Time
	for {
		wait := u.RefreshInterval()
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-kick:
			timer.Stop()
			// An upstream that tells of changes without end costs itself
			// a read per kickGap, no more.
			if d := kickGap - time.Since(told); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
			told = time.Now()
		}
		ok, err := u.Refresh(ctx)
		if err != nil {
			if ctx.Err() == nil {
				u.c.log.Warn("upstream tools/list failed; its tools stay as they were", "upstream", u.opts.Name, "error", err.Error())
			}
			continue
		}
		if ok || u.RefreshInterval() != wait {
			changed(u.Tools())
		}
	}
}

// Tools returns the upstream's tools as the server serves them, in the
// upstream's order. A served name is its override's Name when it has one
// (Override); otherwise Prefix followed by the upstream's name, with every
// character outside A-Z a-z 0-9 _ . - replaced by '_', and a name that is
// then longer than 64 characters (what model APIs accept), or the same as
// another's, keeps its first 55 bytes and ends in '-' and 8 hex digits of
// a hash of the upstream's name, so that the same upstream always yields
// the same names. It is a copy.
func (u *Upstream) Tools() []*tools.Tool { return append([]*tools.Tool(nil), *u.tools.Load()...) }

// Version returns the revision negotiated with the upstream.
func (u *Upstream) Version() string { return u.c.version }

// Close ends the upstream session of a 2025-era upstream (an HTTP DELETE
// of its session id) and closes idle connections. Calls forwarded after
// Close fail.
func (u *Upstream) Close() error { return u.c.close() }
