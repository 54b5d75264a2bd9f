// Package config is the server's settings after defaults: the one
// configuration every internal package reads. wymcp.Options is its public
// form, and the defaults are wymcp's exported Default constants; wymcp.New
// resolves one into the other, once, and every component takes the same
// *Server. No internal package has a default of its own.
package config

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

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
}
