package telemetry

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/wymcp/wymcp/internal/wire"
)

// ScopeName is the instrumentation scope of wymcp's spans and metrics.
const ScopeName = "github.com/wymcp/wymcp"

// Observer records spans, metrics and fault logs for one server. It is safe
// for concurrent use.
type Observer struct {
	// versions are the revisions served: the values mcp.protocol.version
	// takes on metrics (any other is _OTHER).
	versions   *wire.Versions
	tracer     trace.Tracer
	logger     *slog.Logger
	propagator propagation.TextMapPropagator
	// tracing reports whether spans can be recorded at all; see traceSwitch.
	tracing func() bool

	duration   metric.Float64Histogram
	rejections metric.Int64Counter
	inFlight   metric.Int64UpDownCounter

	// faultLog throttles Op.Fault's log records, unavailableLog
	// Op.Unavailable's.
	faultLog       faultLogs
	unavailableLog Limiter
}

// durationBuckets are the semconv buckets of mcp.server.operation.duration.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Options are what an Observer records to: the part of the server's
// settings telemetry reads, so that this package depends on no
// configuration of the server's (the caller, wymcp.New, picks them out).
type Options struct {
	// TracerProvider and MeterProvider receive spans and metrics; nil
	// means the OpenTelemetry globals, read here and followed if an SDK is
	// installed later (see traceSwitch).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Logger receives the contained faults; nil logs nothing.
	Logger *slog.Logger
	// Versions are the revisions served: the values mcp.protocol.version
	// takes on metrics.
	Versions *wire.Versions
}

// New returns an Observer recording to opts' providers and logger.
func New(opts Options) *Observer {
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	logger := opts.Logger
	meter := mp.Meter(ScopeName)
	o := &Observer{
		versions:   opts.Versions,
		tracer:     tp.Tracer(ScopeName),
		logger:     logger,
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		tracing:    traceSwitch(opts.TracerProvider, tp),
		faultLog:   newFaultLogs(logger),
	}
	if logger != nil {
		o.unavailableLog.Report = func(n int64) {
			logger.LogAttrs(context.Background(), slog.LevelError, "wymcp: dependency unavailable, not logged",
				slog.Int64("suppressed", n))
		}
	}
	// Instrument creation fails only for invalid names; ours are constants,
	// and the returned instrument is a usable no-op even on error.
	o.duration, _ = meter.Float64Histogram("mcp.server.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of one MCP message, from its parse to its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.rejections, _ = meter.Int64Counter("wymcp.rejections",
		metric.WithUnit("{message}"),
		metric.WithDescription("Messages answered before a method ran, by stage, HTTP status and JSON-RPC code."))
	o.inFlight, _ = meter.Int64UpDownCounter("wymcp.calls.in_flight",
		metric.WithUnit("{call}"),
		metric.WithDescription("tools/call requests being served."))
	return o
}

// traceSwitch decides, once, how Start learns whether a span could record.
// The trace API has no Enabled (metric instruments do, since otel v1.36), so
// without this the off path would still parse traceparent headers and build
// contexts for spans that a no-op tracer throws away, several times the
// cost of the rest of the off path (BenchmarkOp/off; bench/README.md,
// "Numbers behind the code's comments").
//
//   - An explicit no-op provider (trace/noop) never records.
//   - The global default (nil in Config, no SDK installed yet) records once
//     otel.SetTracerProvider installs one: otel.GetTracerProvider then
//     returns a different provider, and our tracer, taken from the default,
//     delegates to it. The check is an atomic load per message.
//   - Anything else may record; Start asks the span (IsRecording).
func traceSwitch(configured, tp trace.TracerProvider) func() bool {
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return func() bool { return false }
	}
	if configured == nil && isGlobalDefault(tp) {
		return func() bool { return otel.GetTracerProvider() != tp }
	}
	return func() bool { return true }
}

// isGlobalDefault reports whether tp is the delegating provider the otel
// package holds until an SDK is installed (otel/internal/global's
// *tracerProvider). Its type is unexported, so it is told by name, once, in
// New; were it renamed, the check fails safe: tracing counts as maybe-on.
func isGlobalDefault(tp trace.TracerProvider) bool {
	t := reflect.TypeOf(tp)
	return t != nil && t.Kind() == reflect.Pointer &&
		t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" && t.Elem().Name() == "tracerProvider"
}

// Reject records a rejection that happened before a message could be
// classified (no span exists yet): the HTTP edge checks and parse errors.
func (o *Observer) Reject(ctx context.Context, stage string, status int, code wire.Code) {
	if !o.rejections.Enabled(ctx) {
		return
	}
	o.rejections.Add(ctx, 1, metric.WithAttributes(
		attribute.String(keyRejectionStage, stage),
		attribute.Int(keyHTTPStatus, status),
		attribute.String(keyRPCStatusCode, code.String())))
}

// CallStarted and CallEnded maintain the calls-in-flight gauge.
func (o *Observer) CallStarted(ctx context.Context) { o.inFlight.Add(ctx, 1) }

// CallEnded is CallStarted's pair.
func (o *Observer) CallEnded(ctx context.Context) { o.inFlight.Add(ctx, -1) }

// noopSpan stands in for the span of a message when tracing is off.
var noopSpan trace.Span = tracenoop.Span{}

// Start begins the span of one classified message. The parent is the trace
// context in params._meta when meta carries one, else the HTTP headers'; the
// other context, if any, is linked (MCP semantic conventions).
//
// With tracing off nothing is extracted: the returned context is ctx, and a
// remote trace context in the request is not passed on to the tools.
//
// The record is op, a zero Op the caller allocated: the HTTP edge keeps it
// in the one allocation of its request's state.
func (o *Observer) Start(ctx context.Context, op *Op, r *http.Request, msg *wire.Message, meta *wire.RequestMeta) context.Context {
	op.o, op.span, op.method = o, noopSpan, msg.Method
	if meta != nil {
		op.version = meta.ProtocolVersion
	}
	op.netVersion = protoVersion(r)
	if o.duration.Enabled(ctx) {
		op.timed = true
		op.start = time.Now()
	}
	if !o.tracing() {
		return ctx
	}
	parent, links := o.parent(ctx, r, meta)
	ctx, span := o.tracer.Start(parent, spanMethod(msg.Method),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(links...))
	op.span = span
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 9)
		attrs = append(attrs,
			attribute.String(keyMethodName, truncate(msg.Method)),
			attribute.String(keyNetTransport, "tcp"),
			attribute.String(keyNetProtoName, "http"),
			attribute.String(keyNetProtoVersion, op.netVersion))
		if host, port, ok := clientAddress(r.RemoteAddr); ok {
			attrs = append(attrs, attribute.String(keyClientAddress, host))
			if port > 0 {
				attrs = append(attrs, attribute.Int(keyClientPort, port))
			}
		}
		if !msg.ID.IsZero() {
			attrs = append(attrs, attribute.String(keyRequestID, truncate(msg.ID.String())))
		}
		if op.version != "" {
			attrs = append(attrs, attribute.String(keyProtocolVersion, truncate(op.version)))
		}
		span.SetAttributes(attrs...)
	}
	return ctx
}

// parent returns the span's parent context and links: the _meta trace
// context when it is valid (the HTTP one, if valid too, is linked), else the
// HTTP headers'.
func (o *Observer) parent(ctx context.Context, r *http.Request, meta *wire.RequestMeta) (context.Context, []trace.Link) {
	httpCtx := o.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	if meta == nil || meta.Traceparent == "" {
		return httpCtx, nil
	}
	carrier := propagation.MapCarrier{"traceparent": meta.Traceparent}
	if meta.Tracestate != "" {
		carrier["tracestate"] = meta.Tracestate
	}
	if meta.Baggage != "" {
		carrier["baggage"] = meta.Baggage
	}
	metaCtx := o.propagator.Extract(ctx, carrier)
	if !trace.SpanContextFromContext(metaCtx).IsValid() {
		return httpCtx, nil
	}
	if hc := trace.SpanContextFromContext(httpCtx); hc.IsValid() {
		return metaCtx, []trace.Link{{SpanContext: hc}}
	}
	return metaCtx, nil
}

// The attribute names of the MCP semantic conventions (docs/design.md
// §7) and wymcp's own.
const (
	keyMethodName      = "mcp.method.name"
	keyProtocolVersion = "mcp.protocol.version"
	keyRequestID       = "jsonrpc.request.id"
	keyToolName        = "gen_ai.tool.name"
	keyOperationName   = "gen_ai.operation.name"
	keyRPCStatusCode   = "rpc.response.status_code"
	keyErrorType       = "error.type"
	keyNetTransport    = "network.transport"
	keyNetProtoName    = "network.protocol.name"
	keyNetProtoVersion = "network.protocol.version"
	keyClientAddress   = "client.address"
	keyClientPort      = "client.port"
	keyHTTPStatus      = "http.response.status_code"
	keyRejectionStage  = "wymcp.rejection.stage"
	keyContainment     = "wymcp.containment"
	keyEnduserID       = "enduser.id"
	keyAuthRefusal     = "wymcp.auth.refusal"
	keyCallID          = "wymcp.call.id"
	keyCallRound       = "wymcp.call.round"
	keyResultType      = "wymcp.result.type"
)

// resultInputRequired is wymcp.result.type's one value: plain results,
// complete, carry no attribute, so ordinary calls cost and record what
// they did before multi-round-trip calls existed.
const resultInputRequired = "input_required"

func protoVersion(r *http.Request) string {
	switch r.ProtoMajor {
	case 2:
		return "2"
	case 3:
		return "3"
	}
	return "1.1"
}

// clientAddress splits a RemoteAddr ("host:port", "[v6]:port"); ok is false
// when there is no host at all.
func clientAddress(remote string) (host string, port int, ok bool) {
	h, p, err := net.SplitHostPort(remote)
	if err != nil {
		return remote, 0, remote != ""
	}
	port, _ = strconv.Atoi(p)
	return h, port, h != ""
}

// knownMethods are the method names of the MCP registry. Any other name is
// recorded as "_OTHER" in span names and metric attributes (its real value,
// truncated, stays on the span's mcp.method.name): a client chooses the
// method, and an unbounded set of names would be unbounded cardinality for
// every trace and metric backend (the rule semconv gives http.request.method).
var knownMethods = map[string]bool{
	"server/discover": true, "tools/list": true, "tools/call": true,
	"initialize": true, "ping": true, "logging/setLevel": true,
	"completion/complete": true, "subscriptions/listen": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"roots/list": true, "sampling/createMessage": true, "elicitation/create": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/message": true,
	"notifications/roots/list_changed": true, "notifications/tools/list_changed": true,
	"notifications/prompts/list_changed": true, "notifications/resources/list_changed": true,
	"notifications/resources/updated": true, "notifications/elicitation/complete": true,
	"notifications/subscriptions/acknowledged": true,
}

// otherValue is semconv's low-cardinality stand-in for an unknown value.
const otherValue = "_OTHER"

func spanMethod(method string) string {
	if knownMethods[method] {
		return method
	}
	return otherValue
}

// maxAttrLen bounds client-chosen strings (method, id, version, unknown
// tool names) on spans: the body may be 4 MiB.
const maxAttrLen = 256

func truncate(s string) string {
	if len(s) <= maxAttrLen {
		return s
	}
	// Cut on a rune boundary: attribute values must be valid UTF-8.
	i := maxAttrLen
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}
