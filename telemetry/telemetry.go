package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp/protocol"
)

// ScopeName is the instrumentation scope of wymcp's spans and metrics.
const ScopeName = "github.com/wymcp/wymcp"

// Config says where telemetry goes. Nil fields take the defaults: the
// OpenTelemetry global providers and slog.Default().
type Config struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Logger         *slog.Logger
}

// Observer records spans, metrics and fault logs for one server. It is safe
// for concurrent use.
type Observer struct {
	tracer     trace.Tracer
	logger     *slog.Logger
	propagator propagation.TextMapPropagator

	duration   metric.Float64Histogram
	rejections metric.Int64Counter
	inFlight   metric.Int64UpDownCounter
}

// durationBuckets are the semconv buckets of mcp.server.operation.duration.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// New returns an Observer for cfg.
func New(cfg Config) *Observer {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	meter := mp.Meter(ScopeName)
	o := &Observer{
		tracer:     tp.Tracer(ScopeName),
		logger:     logger,
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	// Instrument creation fails only for invalid names; ours are constants,
	// and the returned instrument is a usable no-op even on error.
	o.duration, _ = meter.Float64Histogram("mcp.server.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of one MCP message, from its parse to its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.rejections, _ = meter.Int64Counter("wymcp.rejections",
		metric.WithDescription("Messages answered before a method ran, by stage, HTTP status and JSON-RPC code."))
	o.inFlight, _ = meter.Int64UpDownCounter("wymcp.calls.in_flight",
		metric.WithDescription("tools/call requests being served."))
	return o
}

// Logger returns the logger faults are written to.
func (o *Observer) Logger() *slog.Logger { return o.logger }

// Reject records a rejection that happened before a message could be
// classified (no span exists yet): the HTTP edge checks and parse errors.
func (o *Observer) Reject(ctx context.Context, stage string, status int, code protocol.Code) {
	o.rejections.Add(ctx, 1, metric.WithAttributes(
		attribute.String("wymcp.stage", stage),
		attribute.Int("http.response.status_code", status),
		attribute.String(keyRPCStatusCode, code.String())))
}

// CallStarted and CallEnded maintain the calls-in-flight gauge.
func (o *Observer) CallStarted(ctx context.Context) { o.inFlight.Add(ctx, 1) }

// CallEnded is CallStarted's pair.
func (o *Observer) CallEnded(ctx context.Context) { o.inFlight.Add(ctx, -1) }

// Start begins the span of one classified message. The parent is the trace
// context in params._meta when meta carries one, else the HTTP headers'; the
// other context, if any, is linked (MCP semantic conventions).
func (o *Observer) Start(ctx context.Context, r *http.Request, msg *protocol.Message, meta *protocol.RequestMeta) (context.Context, *Op) {
	httpCtx := o.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	parent := httpCtx
	var links []trace.Link
	if meta != nil && meta.Traceparent != "" {
		carrier := propagation.MapCarrier{"traceparent": meta.Traceparent}
		if meta.Tracestate != "" {
			carrier["tracestate"] = meta.Tracestate
		}
		if meta.Baggage != "" {
			carrier["baggage"] = meta.Baggage
		}
		metaCtx := o.propagator.Extract(ctx, carrier)
		if sc := trace.SpanContextFromContext(metaCtx); sc.IsValid() {
			parent = metaCtx
			if hc := trace.SpanContextFromContext(httpCtx); hc.IsValid() {
				links = append(links, trace.Link{SpanContext: hc})
			}
		}
	}
	ctx, span := o.tracer.Start(parent, msg.Method,
		trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(links...))
	op := &Op{o: o, span: span, method: msg.Method, start: time.Now()}
	if span.IsRecording() {
		attrs := []attribute.KeyValue{
			attribute.String(keyMethodName, msg.Method),
			attribute.String("network.transport", "tcp"),
			attribute.String("network.protocol.name", "http"),
			attribute.String("network.protocol.version", protoVersion(r)),
			attribute.String("client.address", clientAddress(r)),
		}
		if !msg.ID.IsZero() {
			attrs = append(attrs, attribute.String(keyRequestID, msg.ID.String()))
		}
		if meta != nil {
			attrs = append(attrs, attribute.String(keyProtocolVersion, meta.ProtocolVersion))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, op
}

// The attribute names of the MCP semantic conventions (spec digest §7).
const (
	keyMethodName      = "mcp.method.name"
	keyProtocolVersion = "mcp.protocol.version"
	keyRequestID       = "jsonrpc.request.id"
	keyToolName        = "gen_ai.tool.name"
	keyOperationName   = "gen_ai.operation.name"
	keyRPCStatusCode   = "rpc.response.status_code"
	keyErrorType       = "error.type"
)

func protoVersion(r *http.Request) string {
	switch r.ProtoMajor {
	case 2:
		return "2"
	case 3:
		return "3"
	}
	return "1.1"
}

func clientAddress(r *http.Request) string {
	addr := r.RemoteAddr
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			addr = addr[:i]
			break
		}
	}
	if len(addr) > 1 && addr[0] == '[' {
		addr = addr[1 : len(addr)-1]
	}
	return addr
}
