package upstream_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// TestOneTraceAcrossTheHop: the gateway's server span, its CLIENT span
// around the hop and the upstream's server span are one trace, each the
// parent of the next, and the hop is measured. The gateway's span and
// metric name the tool as it serves it (o_echo); the CLIENT span carries
// the upstream's name too, in wymcp.upstream.tool, and the upstream's own
// span names it (echo).
func TestOneTraceAcrossTheHop(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	originTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	gatewayTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	origin := startOrigin(t, &wymcp.Options{TracerProvider: originTP}, originTools(t)...)
	gw := startGateway(t, &wymcp.Options{TracerProvider: gatewayTP},
		upstream.Options{Name: "origin", URL: origin, Prefix: "o_", TracerProvider: gatewayTP, MeterProvider: mp})
	rec.Reset()

	r := mcptest.ToolCall("o_echo", `{"text":"hi"}`)
	r.Headers["Traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	gw.Send(t, r).ExpectResult(t, "1")

	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		key := s.Name() + "/" + s.SpanKind().String()
		spans[key] = s
	}
	server, client, upstreamSpan := spans["tools/call o_echo/server"], spans["tools/call o_echo/client"], spans["tools/call echo/server"]
	if server == nil || client == nil || upstreamSpan == nil {
		t.Fatalf("spans: %v", keys(spans))
	}
	if id := server.SpanContext().TraceID().String(); id != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("the gateway's span is not in the client's trace: %s", id)
	}
	if client.Parent().SpanID() != server.SpanContext().SpanID() || client.SpanContext().TraceID() != server.SpanContext().TraceID() {
		t.Errorf("the CLIENT span's parent is %v, want the gateway's server span %v", client.Parent().SpanID(), server.SpanContext().SpanID())
	}
	if upstreamSpan.Parent().SpanID() != client.SpanContext().SpanID() || upstreamSpan.SpanContext().TraceID() != client.SpanContext().TraceID() {
		t.Errorf("the upstream's span's parent is %v, want the CLIENT span %v", upstreamSpan.Parent().SpanID(), client.SpanContext().SpanID())
	}
	want := map[attribute.Key]string{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "o_echo",
		"wymcp.upstream.tool":   "echo",
		"gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version":  "2026-07-28",
		"server.address":        "127.0.0.1",
		"jsonrpc.request.id":    "",
	}
	for _, kv := range client.Attributes() {
		if w, ok := want[kv.Key]; ok {
			if w != "" && kv.Value.String() != w {
				t.Errorf("CLIENT span %s = %q, want %q", kv.Key, kv.Value.String(), w)
			}
			delete(want, kv.Key)
		}
	}
	if len(want) > 0 {
		t.Errorf("CLIENT span lacks %v", want)
	}
	if client.SpanKind() != trace.SpanKindClient {
		t.Errorf("kind %v", client.SpanKind())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.client.operation.duration" || m.Unit != "s" {
				continue
			}
			h := m.Data.(metricdata.Histogram[float64])
			for _, dp := range h.DataPoints {
				if v, _ := dp.Attributes.Value("gen_ai.tool.name"); v.AsString() == "o_echo" && dp.Count == 1 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("no mcp.client.operation.duration point for o_echo: %+v", rm)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
