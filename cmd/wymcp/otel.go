package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otelSetup is what setupOTel installed: the providers to hand to
// wymcp.Options (nil when a signal is off, which leaves the library on its
// no-op defaults), and per signal where it goes, for the start lines and
// the flush at exit.
type otelSetup struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	signals        []*otelSignal
}

// otelSignal is one telemetry signal as set up.
type otelSignal struct {
	name string // "traces" or "metrics"
	// off says why the signal is off; "" when it is on.
	off string
	// dests are its push exporters (OTLP, console), wrapped.
	dests []*destination
	// prometheus: the metrics are also served for scraping (-metrics-addr).
	prometheus bool
	// shutdown flushes and stops the signal's provider; nil when off.
	shutdown func(context.Context) error
}

// shutdown flushes what is buffered and stops the providers; it is safe on
// a zero otelSetup.
func (s *otelSetup) shutdown(ctx context.Context) error {
	var errs []error
	for _, sig := range s.signals {
		if sig.shutdown != nil {
			errs = append(errs, sig.shutdown(ctx))
		}
	}
	return errors.Join(errs...)
}

// setupOTel configures OpenTelemetry from the standard environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/),
// read through getenv, and from -metrics-addr (prom, the Prometheus
// exporter's reader, nil without the flag):
//
//   - OTEL_SDK_DISABLED=true installs nothing (and refuses -metrics-addr).
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
//   - Everything else (headers, TLS, compression, timeouts,
//     OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
//     OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL…) is read by the SDK and the
//     exporters themselves, from the process environment.
//
// A bad value of any of the variables above, set, is a usageError naming
// the variable (exit status 2), even for a signal that is off: it is found
// at start, not at the first export. The endpoints must be http or https
// URLs with a host, as the exporters need them.
//
// Every push exporter is wrapped (destination): a failed export is logged
// with its signal, protocol, endpoint and cause, at most once per
// exportLogInterval, and the flush at exit (flushOTel) reports what it
// could not send. The console exporter writes to stderr, not stdout:
// stdout carries only the start lines. The service name defaults to
// "wymcp".
func setupOTel(ctx context.Context, getenv func(string) string, stderr io.Writer, logger *slog.Logger, prom sdkmetric.Reader) (s *otelSetup, err error) {
	s = &otelSetup{}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		if prom != nil {
			return nil, usageError{err: errors.New("-metrics-addr needs the OpenTelemetry SDK, which OTEL_SDK_DISABLED=true turns off")}
		}
		for _, name := range []string{"traces", "metrics"} {
			s.signals = append(s.signals, &otelSignal{name: name, off: "OTEL_SDK_DISABLED=true"})
		}
		return s, nil
	}
	if err := checkOTLPEnv(getenv); err != nil {
		return nil, usageError{err: err}
	}
	traces, tracesOff, err := exporters(getenv, "TRACES")
	if err != nil {
		return nil, usageError{err: err}
	}
	metrics, metricsOff, err := exporters(getenv, "METRICS")
	if err != nil {
		return nil, usageError{err: err}
	}
	tsig := &otelSignal{name: "traces", off: tracesOff}
	msig := &otelSignal{name: "metrics", off: metricsOff}
	if prom != nil {
		msig.off, msig.prometheus = "", true
	} else if msig.off != "" {
		msig.off += ", no -metrics-addr"
	}
	s.signals = []*otelSignal{tsig, msig}
	if len(traces) == 0 && len(metrics) == 0 && prom == nil {
		return s, nil
	}
	// What was installed before a failure is stopped (the returns below
	// set s to nil, hence the copy).
	installed := s
	defer func() {
		if err != nil {
			_ = installed.shutdown(ctx)
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
		return nil, usageError{err: fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)}
	}

	if len(traces) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, name := range traces {
			d := newDestination(getenv, "traces", name, logger)
			var exp sdktrace.SpanExporter
			switch name {
			case "console":
				exp, err = stdouttrace.New(stdouttrace.WithWriter(stderr))
			case "otlp":
				if d.protocol == "grpc" {
					exp, err = otlptracegrpc.New(ctx)
				} else {
					exp, err = otlptracehttp.New(ctx)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %s: %w", name, err)
			}
			tsig.dests = append(tsig.dests, d)
			opts = append(opts, sdktrace.WithBatcher(spanExporter{SpanExporter: exp, d: d}))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		s.tracerProvider, tsig.shutdown = tp, tp.Shutdown
	}
	if len(metrics) > 0 || prom != nil {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, name := range metrics {
			d := newDestination(getenv, "metrics", name, logger)
			var exp sdkmetric.Exporter
			switch name {
			case "console":
				exp, err = stdoutmetric.New(stdoutmetric.WithWriter(stderr))
			case "otlp":
				if d.protocol == "grpc" {
					exp, err = otlpmetricgrpc.New(ctx)
				} else {
					exp, err = otlpmetrichttp.New(ctx)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("OTEL_METRICS_EXPORTER %s: %w", name, err)
			}
			msig.dests = append(msig.dests, d)
			opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter{Exporter: exp, d: d})))
		}
		if prom != nil {
			opts = append(opts, sdkmetric.WithReader(prom))
		}
		mp := sdkmetric.NewMeterProvider(opts...)
		s.meterProvider, msig.shutdown = mp, mp.Shutdown
	}
	return s, nil
}

// logStart writes one line per signal: on or off (and why), and where it
// goes. metricsURL is the Prometheus scrape URL, when -metrics-addr is set.
func (s *otelSetup) logStart(logger *slog.Logger, metricsURL string) {
	for _, sig := range s.signals {
		if sig.off != "" {
			logger.Info("telemetry", "signal", sig.name, "state", "off", "reason", sig.off)
			continue
		}
		attrs := []any{"signal", sig.name, "state", "on"}
		for _, d := range sig.dests {
			attrs = append(attrs, d.group())
		}
		if sig.prometheus {
			attrs = append(attrs, slog.Group("prometheus", "endpoint", metricsURL))
		}
		logger.Info("telemetry", attrs...)
	}
}

// The OTLP protocols the exporters speak.
const (
	protoGRPC = "grpc"
	protoHTTP = "http/protobuf"
)

// checkOTLPEnv checks every OTLP protocol and endpoint variable that is set.
func checkOTLPEnv(getenv func(string) string) error {
	for _, sig := range []string{"", "TRACES_", "METRICS_"} {
		key := "OTEL_EXPORTER_OTLP_" + sig + "PROTOCOL"
		switch v := strings.TrimSpace(getenv(key)); v {
		case "", protoGRPC, protoHTTP:
		default:
			return fmt.Errorf("%s=%q: want grpc or http/protobuf", key, v)
		}
		key = "OTEL_EXPORTER_OTLP_" + sig + "ENDPOINT"
		if v := strings.TrimSpace(getenv(key)); v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
				return fmt.Errorf("%s=%q: want an http or https URL with a host, such as http://localhost:4318", key, v)
			}
		}
	}
	return nil
}

// exporters returns the exporters OTEL_<signal>_EXPORTER names ("otlp",
// "console"), or none and why.
func exporters(getenv func(string) string, sig string) (names []string, off string, err error) {
	key := "OTEL_" + sig + "_EXPORTER"
	v := strings.TrimSpace(getenv(key))
	if v == "" {
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_"+sig+"_ENDPOINT") == "" {
			return nil, "no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT)", nil
		}
		v = "otlp"
	}
	for name := range strings.SplitSeq(v, ",") {
		switch name = strings.TrimSpace(name); name {
		case "none":
			return nil, key + "=none", nil
		case "otlp", "console":
			names = append(names, name)
		case "prometheus":
			return nil, "", fmt.Errorf("%s=%q: want otlp, console or none (for a Prometheus scrape endpoint, use -metrics-addr)", key, v)
		default:
			return nil, "", fmt.Errorf("%s=%q: want otlp, console or none", key, v)
		}
	}
	return names, "", nil
}

// otlpProtocol is the OTLP protocol of a signal: the per-signal variable, else
// the general one, else http/protobuf.
func otlpProtocol(getenv func(string) string, sig string) string {
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + sig + "_PROTOCOL")); p != "" {
		return p
	}
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" {
		return p
	}
	return protoHTTP
}

// otlpEndpoint is where the OTLP exporter of a signal sends, as the
// exporters derive it from the environment: the per-signal URL as it is;
// else the general one, with /v1/<signal> appended over HTTP; else the
// default, localhost:4318 (HTTP) or :4317 (gRPC), over https unless
// OTEL_EXPORTER_OTLP_[<signal>_]INSECURE is true.
func otlpEndpoint(getenv func(string) string, sig, protocol string) string {
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + sig + "_ENDPOINT")); v != "" {
		return v
	}
	path := "/v1/" + strings.ToLower(sig)
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		if protocol == protoGRPC {
			return v
		}
		return strings.TrimSuffix(v, "/") + path
	}
	scheme := "https"
	insecure := getenv("OTEL_EXPORTER_OTLP_" + sig + "_INSECURE")
	if insecure == "" {
		insecure = getenv("OTEL_EXPORTER_OTLP_INSECURE")
	}
	if strings.EqualFold(strings.TrimSpace(insecure), "true") {
		scheme = "http"
	}
	if protocol == protoGRPC {
		return scheme + "://localhost:4317"
	}
	return scheme + "://localhost:4318" + path
}

// destination is one push exporter of one signal, and what became of its
// exports. Its wrapper (spanExporter, metricExporter) logs a failed export
// with the destination and the cause, at most once per exportLogInterval
// with the count held back, and a recovery once; the SDK then hands the
// same error to otel's error handler, which skips it (logging.go). During
// the flush at exit it logs nothing: flushOTel reports the flush's outcome
// in one line.
type destination struct {
	signal   string // traces, metrics
	exporter string // otlp, console
	protocol string // OTLP only
	endpoint string // a URL, or "stderr"
	logger   *slog.Logger
	limit    throttle

	// flushing is set when the flush at exit begins; abort then ends the
	// exports still running shortly before the flush's deadline, so that
	// they return with the cause of their failure (the exporters' retries
	// keep it) while the flush can still report it.
	flushing atomic.Bool
	abort    context.Context
	stop     context.CancelCauseFunc

	mu       sync.Mutex
	failures int   // consecutive failed exports
	flushErr error // the last export that failed during the flush
}

func newDestination(getenv func(string) string, sig, exporter string, logger *slog.Logger) *destination {
	d := &destination{signal: sig, exporter: exporter, endpoint: "stderr", logger: logger}
	d.limit.interval = exportLogInterval
	if exporter == "otlp" {
		upper := strings.ToUpper(sig)
		d.protocol = otlpProtocol(getenv, upper)
		d.endpoint = otlpEndpoint(getenv, upper, d.protocol)
	}
	d.abort, d.stop = context.WithCancelCause(context.Background())
	return d
}

// group is the destination as a log attribute: otlp.protocol,
// otlp.endpoint, or console.endpoint.
func (d *destination) group() slog.Attr {
	if d.protocol == "" {
		return slog.Group(d.exporter, "endpoint", d.endpoint)
	}
	return slog.Group(d.exporter, "protocol", d.protocol, "endpoint", d.endpoint)
}

// attrs name the destination in a log record.
func (d *destination) attrs() []any {
	a := []any{"signal", d.signal, "exporter", d.exporter}
	if d.protocol != "" {
		a = append(a, "protocol", d.protocol)
	}
	return append(a, "endpoint", d.endpoint)
}

// exportError is a failed export, as the wrappers return it to the SDK.
type exportError struct {
	d   *destination
	err error
}

func (e *exportError) Error() string {
	return fmt.Sprintf("%s export to %s: %v", e.d.signal, e.d.endpoint, e.err)
}
func (e *exportError) Unwrap() error { return e.err }

// export runs one export and records its outcome.
func (d *destination) export(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(d.abort, func() { cancel(context.Cause(d.abort)) })()
	err := f(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		if d.failures > 0 && !d.flushing.Load() {
			d.logger.Info("OpenTelemetry export recovered", append(d.attrs(), "failed", d.failures)...)
			d.limit.reset()
		}
		d.failures, d.flushErr = 0, nil
		return nil
	}
	d.failures++
	if d.flushing.Load() {
		d.flushErr = err
	} else if ok, suppressed := d.limit.allow(time.Now()); ok {
		attrs := append(d.attrs(), "err", exportCause(err))
		if suppressed > 0 {
			attrs = append(attrs, "suppressed", suppressed)
		}
		d.logger.Warn("OpenTelemetry export failed", attrs...)
	}
	return &exportError{d: d, err: err}
}

// errFlushDeadline ends the exports still running near the end of the flush.
var errFlushDeadline = errors.New("the flush at exit ran out of time")

// exportCause is what an export error says beyond its context's end: the
// OTLP exporters' retries return "<context error>: <last attempt's
// error>" (wrapped in "traces export: …" and the like), and the last
// attempt's error (connection refused, an HTTP status) is the cause. An
// error with no such pair is its own cause.
func exportCause(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		multi, ok := e.(interface{ Unwrap() []error })
		if !ok {
			continue
		}
		var rest []error
		parts := multi.Unwrap()
		for _, part := range parts {
			if !errors.Is(part, context.Canceled) && !errors.Is(part, context.DeadlineExceeded) && !errors.Is(part, errFlushDeadline) {
				rest = append(rest, part)
			}
		}
		if len(rest) == 0 || len(rest) == len(parts) {
			return err
		}
		return errors.Join(rest...)
	}
	return err
}

// spanExporter and metricExporter wrap the exporters (destination).
type spanExporter struct {
	sdktrace.SpanExporter
	d *destination
}

func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	return e.d.export(ctx, func(ctx context.Context) error { return e.SpanExporter.ExportSpans(ctx, spans) })
}

type metricExporter struct {
	sdkmetric.Exporter
	d *destination
}

func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.d.export(ctx, func(ctx context.Context) error { return e.Exporter.Export(ctx, rm) })
}

// otelFlushTimeout bounds the export of what is buffered at exit;
// flushAbortMargin before it, the exports still running are ended, so that
// their cause is known when the flush reports.
const (
	otelFlushTimeout = 5 * time.Second
	flushAbortMargin = 500 * time.Millisecond
)

// flushOTel flushes and stops the providers at exit, each signal's at the
// same time, within otelFlushTimeout. A collector that is down must not
// turn a clean shutdown into a failure: for each destination whose last
// export failed it logs one line with the signal, the endpoint and the
// cause, and for a signal whose stop failed otherwise, one with the error.
func flushOTel(s *otelSetup, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), otelFlushTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, sig := range s.signals {
		if sig.shutdown == nil {
			continue
		}
		for _, d := range sig.dests {
			d.flushing.Store(true)
			t := time.AfterFunc(otelFlushTimeout-flushAbortMargin, func() { d.stop(errFlushDeadline) })
			defer t.Stop()
		}
		wg.Go(func() {
			err := sig.shutdown(ctx)
			reported := false
			for _, d := range sig.dests {
				d.mu.Lock()
				ferr := d.flushErr
				d.mu.Unlock()
				if ferr != nil {
					logger.Warn("OpenTelemetry flush at exit failed: not sent", append(d.attrs(), "err", exportCause(ferr))...)
					reported = true
				}
			}
			if err != nil && !reported {
				logger.Warn("OpenTelemetry flush at exit failed", "signal", sig.name, "err", err)
			}
		})
	}
	wg.Wait()
}
