package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/wymcp/wymcp/cmd/wymcp/internal/otlptest"
)

// TestOTelSelection checks which signals setupOTel installs for a given
// environment. With nothing set, nothing is installed: no exporter retries
// a collector on localhost:4317 that is not there.
func TestOTelSelection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		env             map[string]string
		traces, metrics bool
		wantErr         string
	}{
		{name: "nothing set", env: nil},
		{name: "service name alone", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, traces: true, metrics: true},
		{name: "traces endpoint only", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, traces: true},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}},
		{name: "traces none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, metrics: true},
		{name: "console traces", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, traces: true},
		{name: "grpc", env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, metrics: true},
		{name: "http/json refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, wantErr: "http/json"},
		{name: "unknown exporter", env: map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"}, wantErr: "prometheus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := setupOTel(t.Context(), func(k string) string { return tt.env[k] }, io.Discard, slog.New(slog.DiscardHandler), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			defer func() { _ = s.shutdown(ctx) }()
			if got := s.tracerProvider != nil; got != tt.traces {
				t.Errorf("tracer provider installed = %v, want %v", got, tt.traces)
			}
			if got := s.meterProvider != nil; got != tt.metrics {
				t.Errorf("meter provider installed = %v, want %v", got, tt.metrics)
			}
		})
	}
}

// TestOTelExport runs the program with an OTLP endpoint in the environment
// (both protocols), triggers both containment paths of the demo set, shuts
// it down, and checks that the spans and the duration metric reached the
// receiver by then: the batch delay and export interval are an hour, so
// only the flush at exit can have sent them.
func TestOTelExport(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			var rc *otlptest.Receiver
			if proto == "grpc" {
				var err error
				if rc, err = otlptest.NewGRPC(); err != nil {
					t.Fatal(err)
				}
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+rc.Addr)
			} else {
				rc = otlptest.NewHTTP()
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.URL)
			}
			defer rc.Close()
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_SERVICE_NAME", "wymcp-e2e")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
			t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000")

			s := start(t)
			status, _ := s.post(t, t.Context(), "tools/call", "panic", callBody("panic", `{}`))
			if status != 200 {
				t.Fatalf("panic: status %d", status)
			}
			status, _ = s.post(t, t.Context(), "tools/call", "bad_result", callBody("bad_result", `{}`))
			if status != 200 {
				t.Fatalf("bad_result: status %d", status)
			}
			s.cancel()
			err := <-s.done
			s.done <- err // for start's cleanup
			if err != nil {
				t.Fatalf("run: %v", err)
			}

			// Export happens during shutdown: by now it has arrived.
			var names []string
			events := map[string]string{}
			for _, sp := range rc.Spans() {
				names = append(names, sp.GetName())
				for _, ev := range sp.GetEvents() {
					if ev.GetName() == "exception" {
						a := otlptest.Attrs(ev.GetAttributes())
						events[sp.GetName()] = a["wymcp.containment"] + ": " + a["exception.message"]
					}
				}
			}
			if events["tools/call panic"] != "tool: demo: the panic tool panicked" {
				t.Errorf("panic span's exception = %q (spans %v)", events["tools/call panic"], names)
			}
			if !strings.HasPrefix(events["tools/call bad_result"], "supervisor: ") {
				t.Errorf("bad_result span's exception = %q (spans %v)", events["tools/call bad_result"], names)
			}
			var duration bool
			for _, m := range rc.Metrics() {
				duration = duration || (m.GetName() == "mcp.server.operation.duration" && histogramCount(m) == 2)
			}
			if !duration {
				t.Error("no mcp.server.operation.duration with two calls arrived")
			}
			res := rc.Resources()
			if len(res) == 0 {
				t.Fatal("no resource arrived")
			}
			for _, r := range res {
				if r["service.name"] != "wymcp-e2e" || r["deployment.environment.name"] != "test" || r["service.version"] != version {
					t.Errorf("resource = %v, want OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and the version", r)
				}
			}
		})
	}
}

func histogramCount(m *metricpb.Metric) uint64 {
	var n uint64
	for _, dp := range m.GetHistogram().GetDataPoints() {
		n += dp.GetCount()
	}
	return n
}
