// Package config is the server's settings after defaults: the one
// configuration the server's components read. wymcp.Options is its public
// form, and the defaults are wymcp's exported Default constants; wymcp.New
// resolves one into the other, once, and every component takes the same
// *Server (but internal/telemetry, which upstream uses too: wymcp.New
// hands it the few settings it records to, telemetry.Options). No internal
// package has a default of its own.
package config

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// Server is a resolved configuration: every field holds the value in
// force, with no zero standing for a default (but see TracerProvider).
type Server struct {
	// Info names the server in every result's _meta.
	Info protocol.Implementation
	// Instructions is returned by server/discover (and a 2025 initialize)
	// when not empty.
	Instructions string
	// Versions are the protocol revisions served (never nil).
	Versions *wire.Versions
	// Tools is the tool set the server was built with (SetTools replaces
	// the transport's, not this).
	Tools *toolrun.Set
	// PageSize is the number of tools per tools/list page (> 0).
	PageSize int
	// CacheTTL is the ttlMs of server/discover and tools/list (>= 0).
	CacheTTL time.Duration
	// CursorSecret keys the tools/list cursors' MAC.
	CursorSecret []byte
	// MaxBodyBytes bounds a request body (> 0).
	MaxBodyBytes int64
	// MaxInFlight bounds the requests being answered at once; 0 means
	// unbounded.
	MaxInFlight int64
	// WriteTimeout bounds the sending of one answer; 0 means no bound.
	WriteTimeout time.Duration
	// AnswerBudget bounds the bytes of the tools/call answers held for
	// their clients at once (docs/design.md §3, stage 7); 0 means no bound.
	AnswerBudget int64
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// DrainDelay is the lame duck's length: how long a drain keeps
	// admitting requests, answering each with Connection: close, before
	// Shutdown stops admitting (>= 0; 0 means no lame duck).
	DrainDelay time.Duration
	// AllowedOrigins and AllowedHosts are the browser origins and Host
	// values allowed besides the loopback ones (DNS-rebinding protection).
	AllowedOrigins, AllowedHosts []string
	// TracerProvider and MeterProvider receive spans and metrics. Nil is
	// not a default but a choice kept as it is: the OpenTelemetry globals,
	// read when telemetry starts and followed if an SDK is installed later.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// StateKeys seal the requestState of multi-round-trip calls: 32-byte
	// keys, newest first, never empty (a random key when none was given).
	StateKeys [][]byte
	// StateTTL is how long a requestState stays valid (> 0).
	StateTTL time.Duration
	// Logger receives contained faults and the actor system's warnings.
	Logger *slog.Logger
	// Workers is the pool size of each precomputed method.
	Workers int
	// Auth is the authentication stage; nil when auth is off.
	Auth *Auth
	// ToolsChange: the tool set may change while the server serves, so
	// server/discover advertises tools.listChanged and subscriptions/listen
	// is served (docs/design.md §5a).
	ToolsChange bool
	// MaxListenStreams and MaxListenStreamsPerCaller bound the open listen
	// streams, in total and per caller; 0 means no bound.
	MaxListenStreams, MaxListenStreamsPerCaller int
	// UnknownTool, when not nil, is asked about a tools/call's name the
	// set lacks before the call is answered as unknown; true means look
	// the name up again (wymcp.Options.UnknownTool).
	UnknownTool func(ctx context.Context, name string) bool
	// Access is the policy stage (docs/design.md §11); never nil. It is
	// consulted only for tools that carry a rule or a limit
	// (toolrun.Tool.HasRules, HasLimits).
	Access *Access
}

// Access is the policy stage as the facade built it: it owns the types a
// rule reads (the principal, package access); the transport and the
// tools/list worker ask it, and write what follows.
type Access struct {
	// Allow reports whether the caller of ctx may call tool, a tool with
	// rules, with args (as sent; nil when none). It never panics: a rule
	// that fails denies, and is logged.
	Allow func(ctx context.Context, tool *toolrun.Tool, args []byte) bool
	// Visible returns, for the caller of ctx, whether it may see a tool
	// with rules in its tools/list (the call decides what only the
	// arguments can). The function is for one tools/list: it holds what
	// the rules read of the caller, made once.
	Visible func(ctx context.Context) func(tool *toolrun.Tool) bool
	// Take counts one call of tool, a tool with limits, by the caller
	// whose key who is, against each of its limits: false with the time
	// until a call would be admitted when one is spent. It never panics.
	Take func(ctx context.Context, tool *toolrun.Tool, who string) (ok bool, retryAfter time.Duration)
}

// Auth is the authentication stage (docs/design.md §3 stage 3) as the
// facade built it from wymcp.AuthOptions: the facade decides, since it owns
// the types a decision is made of (Principal, AuthError); the transport
// runs Check, contains a panic inside it, and writes what it returns.
type Auth struct {
	// Check authenticates r, a request naming tool (nil when it names
	// none), and returns ctx carrying the caller (internal/caller, and the
	// facade's principal), or the answer that refuses it; with an answer
	// that hides the tool (AuthAnswer.Hide), both. It may panic.
	Check func(ctx context.Context, r *http.Request, tool *toolrun.Tool) (context.Context, *AuthAnswer)
	// RecordSubject puts the caller's key on spans.
	RecordSubject bool
	// Ready reports whether the authenticator can check any token at all
	// (wymcp.Readier); nil when it always can. The readiness endpoint
	// answers 503 while it fails.
	Ready func(context.Context) error
}

// AuthAnswer is the answer to a request the authentication stage refuses
// (docs/design.md §5): what the transport writes and records.
type AuthAnswer struct {
	// Hide marks a tools/call of a tool the caller may not see (it lacks
	// the tool's scopes, and the server hides rather than challenges,
	// wymcp.AuthOptions.ScopeChallenge): nothing is written here; the
	// request goes on, under the context Check returned, as one naming a
	// tool the server does not have, so that its answer is that one's
	// whatever follows. Only Kind is read.
	Hide   bool
	Status int
	// Header holds the answer's headers (WWW-Authenticate, Retry-After).
	Header map[string]string
	// Err is the JSON-RPC error, answered with the request's id.
	Err *wire.Error
	// Kind names the refusal on the span: "no_token", "invalid_token",
	// "invalid_request", "insufficient_scope" or "unavailable".
	Kind string
	// Unavailable, when set, is why the credential could not be checked:
	// logged (throttled) and put on the span, never sent.
	Unavailable error
}
