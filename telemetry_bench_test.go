package wymcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// discardExporter is a span exporter that drops what it is given: the "on"
// benchmark measures the recording, not the export.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }

func (discardExporter) Shutdown(context.Context) error { return nil }

// BenchmarkTelemetry is the hot path, a tools/call of echo through
// Server.ServeHTTP, with telemetry off (no-op providers: what a library user
// gets with no SDK installed) and on (the real SDKs: every span sampled and
// batched to a discarding exporter, metrics aggregated for a manual reader).
func BenchmarkTelemetry(b *testing.B) {
	body := mcptest.ToolCall("echo", `{"text":"hello"}`).Body
	run := func(b *testing.B, opts *wymcp.Options) {
		opts.Logger = slog.New(slog.DiscardHandler)
		srv, err := wymcp.New(protocol.Implementation{Name: "wymcp-bench", Version: "0.0.1"}, opts, testTools(b, nil)...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
		hdr := http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {"echo"},
			"Traceparent":          {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header = hdr.Clone()
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	}
	b.Run("off", func(b *testing.B) {
		run(b, &wymcp.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardExporter{}))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(context.Background())
			_ = mp.Shutdown(context.Background())
		})
		run(b, &wymcp.Options{TracerProvider: tp, MeterProvider: mp})
	})
}
