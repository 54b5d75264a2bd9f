package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// syncBuffer is a log destination that tests read while run writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// timeAttr is the time= of a text record, which tests cannot predict.
var timeAttr = regexp.MustCompile(`(?m)^time=\S+ `)

// untimed is a text log without its times.
func untimed(log string) string { return timeAttr.ReplaceAllString(log, "") }

// noTime drops the time of the records of a test's own text handler.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestOTelConfigErrors checks that a bad telemetry variable is a usage
// error found at start: exit status 2 and one line naming the variable.
func TestOTelConfigErrors(t *testing.T) {
	t.Parallel()
	const urlWant = `: want an http or https URL with a host, such as http://localhost:4318`
	tests := []struct {
		name string
		env  map[string]string
		prom bool
		want string
	}{
		{"http/json", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			false, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json": want grpc or http/protobuf`},
		{"per-signal protocol, signal off", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpcs"},
			false, `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL="grpcs": want grpc or http/protobuf`},
		{"not a url", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "not a url"},
			false, `OTEL_EXPORTER_OTLP_ENDPOINT="not a url"` + urlWant},
		{"no scheme", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "localhost:4317"},
			false, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="localhost:4317"` + urlWant},
		{"other scheme", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "ftp://collector/"},
			false, `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT="ftp://collector/"` + urlWant},
		{"no host", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http:///v1"},
			false, `OTEL_EXPORTER_OTLP_ENDPOINT="http:///v1"` + urlWant},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"},
			false, `OTEL_TRACES_EXPORTER="jaeger": want otlp, console or none`},
		{"prometheus exporter", map[string]string{"OTEL_METRICS_EXPORTER": "prometheus"},
			false, `OTEL_METRICS_EXPORTER="prometheus": want otlp, console or none (for a Prometheus scrape endpoint, use -metrics-addr)`},
		{"disabled with -metrics-addr", map[string]string{"OTEL_SDK_DISABLED": "true"},
			true, `-metrics-addr needs the OpenTelemetry SDK, which OTEL_SDK_DISABLED=true turns off`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logger := slog.New(slog.DiscardHandler)
			s, err := setupOTel(t.Context(), func(k string) string { return tt.env[k] }, io.Discard, logger, newReaderOrNil(t, tt.prom, logger))
			if err == nil {
				_ = s.shutdown(t.Context())
			}
			var stderr strings.Builder
			if code := exitCode(err, &stderr); code != 2 {
				t.Errorf("exit code = %d (err %v), want 2", code, err)
			}
			if got, want := stderr.String(), "wymcp: "+tt.want+"\n"; got != want {
				t.Errorf("stderr = %q, want %q", got, want)
			}
		})
	}
}

func newReaderOrNil(t *testing.T, on bool, logger *slog.Logger) sdkmetric.Reader {
	t.Helper()
	if !on {
		return nil
	}
	r, _, err := newPrometheus(logger)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOTelConfigErrorExits runs the program with a bad OTLP variable: it
// exits 2 before it listens, with the one line, and prints nothing on
// stdout.
func TestOTelConfigErrorExits(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"http/json", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			`wymcp: OTEL_EXPORTER_OTLP_PROTOCOL="http/json": want grpc or http/protobuf` + "\n"},
		{"not a url", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "not a url"},
			`wymcp: OTEL_EXPORTER_OTLP_ENDPOINT="not a url": want an http or https URL with a host, such as http://localhost:4318` + "\n"},
		// The SDK reads the resource's variables itself.
		{"bad resource", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_RESOURCE_ATTRIBUTES": "novalue"},
			`wymcp: OTEL_RESOURCE_ATTRIBUTES: error detecting resource: partial resource: missing value: [novalue]` + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr strings.Builder
			err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 2 {
				t.Errorf("exit code = %d (err %v), want 2", code, err)
			}
			if stderr.String() != tt.want {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestTelemetryStartLines checks the one start line per signal: on or off
// and why, and where it goes.
func TestTelemetryStartLines(t *testing.T) {
	t.Parallel()
	const scrape = "http://127.0.0.1:9464/metrics"
	tests := []struct {
		name string
		env  map[string]string
		prom bool
		want string
	}{{
		name: "nothing set",
		want: `level=INFO msg=telemetry signal=traces state=off reason="no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)"
level=INFO msg=telemetry signal=metrics state=off reason="no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT), no -metrics-addr"
`,
	}, {
		name: "disabled",
		env:  map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		want: `level=INFO msg=telemetry signal=traces state=off reason="OTEL_SDK_DISABLED=true"
level=INFO msg=telemetry signal=metrics state=off reason="OTEL_SDK_DISABLED=true"
`,
	}, {
		name: "http endpoint",
		env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"},
		want: `level=INFO msg=telemetry signal=traces state=on otlp.protocol=http/protobuf otlp.endpoint=http://127.0.0.1:4318/v1/traces
level=INFO msg=telemetry signal=metrics state=on otlp.protocol=http/protobuf otlp.endpoint=http://127.0.0.1:4318/v1/metrics
`,
	}, {
		name: "grpc endpoint, metrics none",
		env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_METRICS_EXPORTER": "none"},
		want: `level=INFO msg=telemetry signal=traces state=on otlp.protocol=grpc otlp.endpoint=http://127.0.0.1:4317
level=INFO msg=telemetry signal=metrics state=off reason="OTEL_METRICS_EXPORTER=none, no -metrics-addr"
`,
	}, {
		name: "per-signal endpoint, console and prometheus",
		env:  map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/custom", "OTEL_METRICS_EXPORTER": "console"},
		prom: true,
		want: `level=INFO msg=telemetry signal=traces state=on otlp.protocol=http/protobuf otlp.endpoint=http://127.0.0.1:4318/custom
level=INFO msg=telemetry signal=metrics state=on console.endpoint=stderr prometheus.endpoint=` + scrape + `
`,
	}, {
		name: "prometheus alone",
		prom: true,
		want: `level=INFO msg=telemetry signal=traces state=off reason="no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)"
level=INFO msg=telemetry signal=metrics state=on prometheus.endpoint=` + scrape + `
`,
	}, {
		name: "otlp with no endpoint, insecure grpc",
		env:  map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
		want: `level=INFO msg=telemetry signal=traces state=on otlp.protocol=grpc otlp.endpoint=http://localhost:4317
level=INFO msg=telemetry signal=metrics state=on otlp.protocol=http/protobuf otlp.endpoint=http://localhost:4318/v1/metrics
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf syncBuffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime}))
			s, err := setupOTel(t.Context(), func(k string) string { return tt.env[k] }, io.Discard, logger, newReaderOrNil(t, tt.prom, logger))
			if err != nil {
				t.Fatal(err)
			}
			s.logStart(logger, scrape)
			got := buf.String()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_ = s.shutdown(ctx)
			if got != tt.want {
				t.Errorf("start lines:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestOTelDeadCollector runs the program against an OTLP endpoint where
// nothing listens, over each protocol: the failures are logged with the
// signal, the endpoint and the cause, once however often they recur; the
// flush at exit logs one line per signal it could not send, with the
// cause, within its 5 s; the exit is clean; and every line is a record of
// the one text handler (no line of the standard log package's format).
func TestOTelDeadCollector(t *testing.T) {
	for _, proto := range []string{protoGRPC, protoHTTP} {
		t.Run(proto, func(t *testing.T) {
			addr := deadAddr(t)
			base := "http://" + addr
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", base)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			// Metrics fail every ~250 ms; the spans wait for the flush,
			// whose export (10 s timeout by default) outlasts it over gRPC.
			t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "50")
			t.Setenv("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "200")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
			traces, metrics := base, base
			if proto == protoHTTP {
				traces, metrics = base+"/v1/traces", base+"/v1/metrics"
			}

			var log syncBuffer
			s := startTo(t, &log)
			if status, _ := s.post(t, t.Context(), "tools/call", "echo", callBody("echo", `{"text":"x"}`)); status != 200 {
				t.Fatalf("echo: status %d", status)
			}
			failed := `level=WARN msg="OpenTelemetry export failed" signal=metrics exporter=otlp protocol=` + proto + ` endpoint=` + metrics + ` err=`
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(untimed(log.String()), failed) {
				if time.Now().After(deadline) {
					t.Fatalf("no export failure logged in 10 s; log:\n%s", log.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(time.Second) // several more failures, none logged

			began := time.Now()
			s.cancel()
			err := <-s.done
			s.done <- err // for start's cleanup
			took := time.Since(began)
			if err != nil {
				t.Fatalf("run = %v, want nil", err)
			}
			// The bound tells the flush's 5 s from the exporter's own 10 s
			// timeout, with room for a loaded machine's drain and exit.
			if took > otelFlushTimeout+3*time.Second {
				t.Errorf("the stop took %v, want at most the flush's %v and 3 s", took, otelFlushTimeout)
			}

			raw := log.String()
			for line := range strings.Lines(raw) {
				if !strings.HasPrefix(line, "time=") && !strings.HasPrefix(line, "\t") {
					t.Errorf("a line not of the slog text handler: %q", line)
				}
			}
			lines := strings.Split(untimed(raw), "\n")
			want := map[string]string{
				"on, traces":  `level=INFO msg=telemetry signal=traces state=on otlp.protocol=` + proto + ` otlp.endpoint=` + traces,
				"on, metrics": `level=INFO msg=telemetry signal=metrics state=on otlp.protocol=` + proto + ` otlp.endpoint=` + metrics,
				"failed":      failed,
				"flush, traces": `level=WARN msg="OpenTelemetry flush at exit failed: not sent" signal=traces exporter=otlp protocol=` +
					proto + ` endpoint=` + traces + ` err=`,
				"flush, metrics": `level=WARN msg="OpenTelemetry flush at exit failed: not sent" signal=metrics exporter=otlp protocol=` +
					proto + ` endpoint=` + metrics + ` err=`,
			}
			for what, prefix := range want {
				var found []string
				for _, l := range lines {
					if strings.HasPrefix(l, prefix) {
						found = append(found, l)
					}
				}
				if len(found) != 1 {
					t.Errorf("%s: %d lines starting %q, want 1; log:\n%s", what, len(found), prefix, raw)
					continue
				}
				if strings.Contains(prefix, " err=") && !strings.Contains(found[0], "connect: connection refused") {
					t.Errorf("%s: %q does not name the cause, connection refused", what, found[0])
				}
			}
			if strings.Contains(raw, "context deadline exceeded") || strings.Contains(raw, "context canceled") {
				t.Errorf("the log names a deadline, not the cause:\n%s", raw)
			}
			if n := strings.Count(raw, "OpenTelemetry"); n != 3 {
				t.Errorf("%d OpenTelemetry lines, want 3 (one failure, two flushes):\n%s", n, raw)
			}
		})
	}
}
