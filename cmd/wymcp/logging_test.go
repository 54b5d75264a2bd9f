package main

import (
	"encoding/json"
	"errors"
	"log"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

// TestMultilineHandler checks the text format's multi-line values: each
// goes below its record, under its qualified key, every line indented,
// control characters escaped; the rest of the record is the text handler's.
func TestMultilineHandler(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := slog.New(&multilineHandler{
		inner: slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime}),
		w:     &buf, mu: new(sync.Mutex)})
	logger.Error("wymcp: contained fault",
		"containment", "tool",
		"exception.stacktrace", "goroutine 7 [running]:\nmain.f()\n\t/src/main.go:10 +0x1d\n",
		slog.Group("g", "err", errors.New("first\r\nsecond\x1b[31m")),
		"one", "line")
	logger.WithGroup("req").With("id", 1).Warn("two", "stack", "a\nb")
	logger.Info("plain", "err", errors.New("one line"))
	want := `level=ERROR msg="wymcp: contained fault" containment=tool exception.stacktrace="(3 lines below)" g.err="(2 lines below)" one=line
	exception.stacktrace:
		goroutine 7 [running]:
		main.f()
			/src/main.go:10 +0x1d
	g.err:
		first
		second\x1b[31m
level=WARN msg=two req.id=1 req.stack="(2 lines below)"
	req.stack:
		a
		b
level=INFO msg=plain err="one line"
`
	if got := buf.String(); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
}

// TestContainedFaultLog runs the program and makes the demo's panic tool
// panic: in the text format the stack follows the record, one frame line
// per log line; in JSON it is one string in the record's one line.
func TestContainedFaultLog(t *testing.T) {
	t.Parallel()
	for _, format := range []string{logText, logJSON} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var log syncBuffer
			s := startTo(t, &log, "-log-format", format)
			if status, _ := s.post(t, t.Context(), "tools/call", "panic", callBody("panic", `{}`)); status != 200 {
				t.Fatalf("panic: status %d", status)
			}
			s.pool.CloseIdleConnections()
			s.cancel()
			err := <-s.done
			s.done <- err
			if err != nil {
				t.Fatal(err)
			}
			raw := log.String()
			if format == logJSON {
				var found bool
				for line := range strings.Lines(raw) {
					var rec map[string]any
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Errorf("not a JSON line: %q (%v)", line, err)
						continue
					}
					if rec["msg"] == "wymcp: contained fault" {
						found = true
						st, _ := rec["exception.stacktrace"].(string)
						if !strings.HasPrefix(st, "goroutine ") || !strings.Contains(st, "\n") {
							t.Errorf("exception.stacktrace = %q, want the whole stack as one string", st)
						}
					}
				}
				if !found {
					t.Errorf("no contained fault record; log:\n%s", raw)
				}
				return
			}
			lines := strings.Split(raw, "\n")
			i := 0
			for i < len(lines) && !strings.Contains(lines[i], `msg="wymcp: contained fault"`) {
				i++
			}
			if i == len(lines) {
				t.Fatalf("no contained fault record; log:\n%s", raw)
			}
			rec := lines[i]
			if !strings.HasPrefix(rec, "time=") || !strings.Contains(rec, ` exception.message="demo: the panic tool panicked" `) ||
				!strings.Contains(rec, ` exception.stacktrace="(`) || strings.Contains(rec, `\n`) {
				t.Errorf("record = %q, want one line noting the stack below", rec)
			}
			if i+2 >= len(lines) || lines[i+1] != "\texception.stacktrace:" || !strings.HasPrefix(lines[i+2], "\t\tgoroutine ") {
				t.Fatalf("below the record: %q, want the stack's key, then the stack", lines[i+1:min(i+3, len(lines))])
			}
			n := 0
			for _, l := range lines[i+2:] {
				if !strings.HasPrefix(l, "\t\t") {
					break
				}
				n++
			}
			if !strings.Contains(rec, ` exception.stacktrace="(`+strconv.Itoa(n)+` lines below)"`) {
				t.Errorf("record = %q, want it to count the %d lines below", rec, n)
			}
		})
	}
}

// TestFatalIsLogged: a failure once the logger exists (here the port is
// taken) is one record of the run's format, the first line on stderr:
// exit status 1, nothing on stdout, no warning before it.
func TestFatalIsLogged(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	addr := taken.Addr().String()
	listenErr := "listen tcp " + addr + ": bind: address already in use"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"text", []string{"-addr", addr},
			`level=ERROR msg="wymcp: fatal" err="` + listenErr + `"` + "\n"},
		{"json", []string{"-addr", addr, "-log-format", "json"},
			`"level":"ERROR","msg":"wymcp: fatal","err":"` + listenErr + `"}` + "\n"},
		{"metrics address taken", []string{"-addr", "127.0.0.1:0", "-metrics-addr", addr},
			`level=ERROR msg="wymcp: fatal" err="-metrics-addr: ` + listenErr + `"` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			err := run(t.Context(), tt.args, &stdout, &stderr)
			if code := exitCode(err, &stderr); code != 1 {
				t.Errorf("exit code = %d (err %v), want 1", code, err)
			}
			got := jsonTimeAttr.ReplaceAllString(untimed(stderr.String()), "")
			if got != tt.want {
				t.Errorf("stderr = %q, want %q", got, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// jsonTimeAttr is the time of a JSON record.
var jsonTimeAttr = regexp.MustCompile(`(?m)^\{"time":"[^"]*",`)

// TestProcessHooks checks that what the dependencies log through their
// process-wide hooks comes out of the run's handler: the standard log
// package, OpenTelemetry's error handler, gRPC's logger.
func TestProcessHooks(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime}))
	restore := useLogger(logger)
	otelErrors.limit.reset() // another test's error must not hold this one back
	log.Print("from the log package")
	otel.Handle(errors.New("boom"))
	grpclog.Errorf("grpc says %d", 1)
	grpclog.Info("below gRPC's default severity: not written")
	restore()
	want := `level=INFO msg="from the log package"
level=WARN msg="OpenTelemetry error" err=boom
level=ERROR msg="grpc: grpc says 1"
`
	if got := buf.String(); got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
	if processLogger() == logger {
		t.Error("the run's logger is still the process's after its end")
	}
}
