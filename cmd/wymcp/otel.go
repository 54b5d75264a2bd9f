package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otelSetup is what setupOTel installed: the providers to hand to
// wymcp.Options (nil when a signal is off, which leaves the library on its
// no-op defaults) and the shutdown that flushes and stops them.
type otelSetup struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	shutdowns      []func(context.Context) error
}

// shutdown flushes what is buffered and stops the providers; it is safe on
// a zero otelSetup.
func (s *otelSetup) shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range s.shutdowns {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// setupOTel configures OpenTelemetry from the standard environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/),
// read through getenv:
//
//   - OTEL_SDK_DISABLED=true installs nothing.
//   - OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER: otlp, console or none
//     (a comma-separated list is honoured). Unset, a signal is exported over
//     OTLP only when an OTLP endpoint is set for it
//     (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT).
//     This departs from the SDK default ("otlp" to localhost): with nothing
//     set the demo server installs nothing, instead of retrying a collector
//     that is not there and logging every failure.
//   - OTEL_EXPORTER_OTLP_PROTOCOL, or the per-signal
//     OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL: grpc or http/protobuf
//     (the default, as the specification recommends); http/json is refused.
//   - Everything else (endpoints, headers, TLS, compression, timeouts,
//     OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
//     OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL…) is read by the SDK and the
//     exporters themselves, from the process environment.
//
// The console exporter writes to stderr, not stdout: stdout carries only the
// "listening" line. The service name defaults to "wymcp".
func setupOTel(ctx context.Context, getenv func(string) string, stderr io.Writer) (s *otelSetup, err error) {
	s = &otelSetup{}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	traces, err := exporters(getenv, "TRACES")
	if err != nil {
		return nil, err
	}
	metrics, err := exporters(getenv, "METRICS")
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 && len(metrics) == 0 {
		return s, nil
	}
	defer func() {
		if err != nil {
			_ = s.shutdown(ctx)
			s = nil
		}
	}()
	res, err := resource.New(ctx,
		resource.WithAttributes(
			attribute.String("service.name", "wymcp"),
			attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		// Last, so that OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}

	if len(traces) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, name := range traces {
			var exp sdktrace.SpanExporter
			switch name {
			case "console":
				exp, err = stdouttrace.New(stdouttrace.WithWriter(stderr))
			case "otlp":
				if otlpProtocol(getenv, "TRACES") == "grpc" {
					exp, err = otlptracegrpc.New(ctx)
				} else {
					exp, err = otlptracehttp.New(ctx)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %s: %w", name, err)
			}
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		s.tracerProvider = tp
		s.shutdowns = append(s.shutdowns, tp.Shutdown)
	}
	if len(metrics) > 0 {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, name := range metrics {
			var exp sdkmetric.Exporter
			switch name {
			case "console":
				exp, err = stdoutmetric.New(stdoutmetric.WithWriter(stderr))
			case "otlp":
				if otlpProtocol(getenv, "METRICS") == "grpc" {
					exp, err = otlpmetricgrpc.New(ctx)
				} else {
					exp, err = otlpmetrichttp.New(ctx)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("OTEL_METRICS_EXPORTER %s: %w", name, err)
			}
			opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
		}
		mp := sdkmetric.NewMeterProvider(opts...)
		s.meterProvider = mp
		s.shutdowns = append(s.shutdowns, mp.Shutdown)
	}
	return s, nil
}

// exporters returns the exporters OTEL_<signal>_EXPORTER names ("otlp",
// "console"), none for "none", and checks the OTLP protocol when otlp is
// among them.
func exporters(getenv func(string) string, signal string) ([]string, error) {
	key := "OTEL_" + signal + "_EXPORTER"
	v := strings.TrimSpace(getenv(key))
	if v == "" {
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") == "" {
			return nil, nil
		}
		v = "otlp"
	}
	var out []string
	for name := range strings.SplitSeq(v, ",") {
		switch name = strings.TrimSpace(name); name {
		case "none":
			return nil, nil
		case "otlp":
			switch p := otlpProtocol(getenv, signal); p {
			case "grpc", "http/protobuf":
			default:
				return nil, fmt.Errorf("OTLP protocol %q is not supported (want grpc or http/protobuf)", p)
			}
			out = append(out, name)
		case "console":
			out = append(out, name)
		default:
			return nil, fmt.Errorf("%s=%q: want otlp, console or none", key, v)
		}
	}
	return out, nil
}

// otlpProtocol is the OTLP protocol of a signal: the per-signal variable, else
// the general one, else http/protobuf.
func otlpProtocol(getenv func(string) string, signal string) string {
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")); p != "" {
		return p
	}
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" {
		return p
	}
	return "http/protobuf"
}

// otelFlushTimeout bounds the export of what is buffered at exit.
const otelFlushTimeout = 5 * time.Second

// flushOTel flushes and stops the providers at exit. A collector that is
// down must not turn a clean shutdown into a failure: it is logged.
func flushOTel(s *otelSetup, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), otelFlushTimeout)
	defer cancel()
	if err := s.shutdown(ctx); err != nil {
		logger.Warn("OpenTelemetry flush at exit failed", "err", err)
	}
}
