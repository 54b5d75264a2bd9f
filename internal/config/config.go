// Package config is the server's settings after defaults: the one
// configuration every internal package reads. wymcp.Options is its public
// form, and the defaults are wymcp's exported Default constants; wymcp.New
// resolves one into the other, once, and every component takes the same
// *Server. No internal package has a default of its own.
package config

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// Server is a resolved configuration: every field holds the value in
// force, with no zero standing for a default (but see TracerProvider).
type Server struct {
	// Info names the server in every result's _meta.
	Info protocol.Implementation
	// Instructions is returned by server/discover when not empty.
	Instructions string
	// Tools is the tool set, fixed for the server's life.
	Tools *tools.Set
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
}

// Auth is the authentication stage's configuration (docs/design.md §3
// stage 3): wymcp.AuthOptions after checking, with the embedder's
// Authenticator adapted to the internal types (transport cannot import
// the facade).
type Auth struct {
	// Authenticate runs the embedder's authenticator and returns the
	// caller, or why not. It may panic: the stage contains it.
	Authenticate func(ctx context.Context, r *http.Request) (*caller.Identity, *AuthRefusal)
	// ResourceMetadata is the RFC 9728 document's URL for the challenges;
	// "" leaves resource_metadata out.
	ResourceMetadata string
	// RequiredScopes are needed by every request.
	RequiredScopes []string
	// RecordSubject puts the principal's subject on spans.
	RecordSubject bool
}

// RefusalKind is the kind of an authenticator's refusal; each has its
// status and challenge (docs/design.md §5).
type RefusalKind uint8

// The refusal kinds, one per wymcp.AuthCode.
const (
	RefuseNoToken           RefusalKind = iota + 1 // 401, no error code
	RefuseInvalidToken                             // 401 invalid_token
	RefuseInvalidRequest                           // 400 invalid_request
	RefuseInsufficientScope                        // 403 insufficient_scope
	RefuseUnavailable                              // 503, Retry-After, logged
)

// AuthRefusal is an authenticator's refusal, as the stage answers it.
type AuthRefusal struct {
	Kind RefusalKind
	// Description is the challenge's error_description ("" for none).
	Description string
	// Scopes are scopes the authenticator found missing.
	Scopes []string
	// Cause is for the log; never sent.
	Cause error
}
