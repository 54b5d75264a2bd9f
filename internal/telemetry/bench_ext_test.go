package telemetry_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/wymcp/wymcp/internal/telemetry"
	"github.com/wymcp/wymcp/internal/wire"
)

// BenchmarkOp is telemetry's own share of one tools/call: Start, SetTool,
// the calls-in-flight pair and End, with no-op providers (off) and the SDKs
// (on: every span sampled, to a discarding exporter; metrics aggregated for
// a manual reader).
func BenchmarkOp(b *testing.B) {
	msg, _, perr := wire.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if perr != nil {
		b.Fatal(perr)
	}
	req, perr := wire.ParseRequest(msg)
	if perr != nil {
		b.Fatal(perr)
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	run := func(b *testing.B, opts telemetry.Options) {
		opts.Logger = slog.New(slog.DiscardHandler)
		o := telemetry.New(opts)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			op := new(telemetry.Op)
			cctx := o.Start(ctx, op, r, &msg, &req.Meta)
			op.SetTool("echo")
			o.CallStarted(cctx)
			o.CallEnded(cctx)
			op.End(cctx, 0, false)
		}
	}
	b.Run("off", func(b *testing.B) {
		run(b, telemetry.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(), Logger: slog.Default()})
	})
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(discard{}))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		run(b, telemetry.Options{TracerProvider: tp, MeterProvider: mp, Logger: slog.Default()})
	})
}

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
