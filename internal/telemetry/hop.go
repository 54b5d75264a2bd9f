package telemetry

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Hops records the gateway's requests to one upstream MCP server
// (docs/design.md §7, §10): a CLIENT span around each, named and attributed
// per the MCP semantic conventions, the mcp.client.operation.duration
// histogram, and the W3C trace context the upstream continues the trace
// from.
type Hops struct {
	tracer   trace.Tracer
	tracing  func() bool
	duration metric.Float64Histogram
	// server are server.address and server.port, the same for every hop.
	server []attribute.KeyValue
}

// NewHops returns the recorder of one upstream's hops, to tp and mp (the
// OpenTelemetry globals when nil), addr and port naming the upstream.
func NewHops(tp trace.TracerProvider, mp metric.MeterProvider, addr string, port int) *Hops {
	configured := tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	h := &Hops{
		tracer:  tp.Tracer(ScopeName),
		tracing: traceSwitch(configured, tp),
		server:  []attribute.KeyValue{attribute.String("server.address", addr), attribute.Int("server.port", port)},
	}
	h.duration, _ = mp.Meter(ScopeName).Float64Histogram("mcp.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of one MCP request the gateway sent to an upstream, until its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return h
}

// Hop is the record of one request to the upstream: a value, kept by the
// caller, so that a hop with tracing off costs no allocation.
type Hop struct {
	h       *Hops
	span    trace.Span
	start   time.Time
	method  string
	tool    string
	version string
}

// Start opens the hop of a request of method (tool names the tool of a
// tools/call as the gateway serves it, "" otherwise), in revision version,
// and returns the context the request is sent under: its span is the
// CLIENT span, a child of the span in ctx.
func (h *Hops) Start(ctx context.Context, method, tool, version string) (context.Context, Hop) {
	hop := Hop{h: h, span: noopSpan, method: method, tool: tool, version: version}
	if h.duration.Enabled(ctx) {
		hop.start = time.Now()
	}
	if !h.tracing() {
		return ctx, hop
	}
	name := spanMethod(method)
	if tool != "" {
		name += " " + tool
	}
	ctx, hop.span = h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if hop.span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 7)
		attrs = append(attrs,
			attribute.String(keyMethodName, method),
			attribute.String(keyProtocolVersion, version),
			attribute.String(keyNetTransport, "tcp"),
			attribute.String(keyNetProtoName, "http"))
		if tool != "" {
			attrs = append(attrs,
				attribute.String(keyToolName, truncate(tool)),
				attribute.String(keyOperationName, "execute_tool"))
		}
		hop.span.SetAttributes(attrs...)
		hop.span.SetAttributes(h.server...)
	}
	return ctx, hop
}

// TraceContext returns the W3C trace context of ctx (the hop's span), for
// the request's headers and its params._meta: the MCP semantic conventions
// read it from the latter, and a server behind a proxy that drops headers
// still continues the trace. Both are "" when no span records.
func (hop *Hop) TraceContext(ctx context.Context) (traceparent, tracestate string) {
	if !hop.span.SpanContext().IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"], c["tracestate"]
}

// keyUpstreamTool is the upstream's own name of the tool a hop calls, on
// its CLIENT span when the gateway serves it under another (a prefix, an
// override): the span and metric name the served one, as the client
// called it, and this joins the two.
const keyUpstreamTool = "wymcp.upstream.tool"

// SetUpstreamTool records name, the upstream's name of the tool called,
// when it is not the served name the hop started with.
func (hop *Hop) SetUpstreamTool(name string) {
	if name != hop.tool && hop.span.IsRecording() {
		hop.span.SetAttributes(attribute.String(keyUpstreamTool, truncate(name)))
	}
}

// SetRequestID records the request's JSON-RPC id.
func (hop *Hop) SetRequestID(id int64) {
	if hop.span.IsRecording() {
		hop.span.SetAttributes(attribute.String(keyRequestID, strconv.FormatInt(id, 10)))
	}
}

// End closes the hop. errorType is "" for a request answered with a
// result, "tool_error" for a result whose isError is set, the JSON-RPC
// code for an error answer (rpcCode, also recorded as
// rpc.response.status_code), or the gateway's name for a failure of the
// exchange itself ("upstream_unreachable", an HTTP status, …); detail is
// the span's status description.
func (hop *Hop) End(ctx context.Context, errorType, rpcCode, detail string) {
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs,
		attribute.String(keyMethodName, hop.method),
		attribute.String(keyProtocolVersion, hop.version))
	if hop.tool != "" {
		attrs = append(attrs, attribute.String(keyToolName, truncate(hop.tool)))
	}
	if errorType != "" {
		attrs = append(attrs, attribute.String(keyErrorType, errorType))
	}
	if rpcCode != "" {
		attrs = append(attrs, attribute.String(keyRPCStatusCode, rpcCode))
	}
	if !hop.start.IsZero() {
		all := append(attrs, hop.h.server...)
		hop.h.duration.Record(context.WithoutCancel(ctx), time.Since(hop.start).Seconds(), metric.WithAttributes(all...))
	}
	if hop.span.IsRecording() {
		if errorType != "" {
			hop.span.SetAttributes(attribute.String(keyErrorType, errorType))
			hop.span.SetStatus(codes.Error, truncate(detail))
		}
		if rpcCode != "" {
			hop.span.SetAttributes(attribute.String(keyRPCStatusCode, rpcCode))
		}
	}
	hop.span.End()
}
