package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

// The log formats of -log-format.
const (
	logText = "text"
	logJSON = "json"
)

// newLogger is the one logger of a run: every line the binary writes to
// stderr goes through its handler (docs/operations.md, "Logging"). text is slog's
// text format, with a value that spans lines (a contained fault's stack)
// written on the lines after its record (multilineHandler); json is slog's
// JSON format, one object per line, for a log collector.
func newLogger(format string, w io.Writer) *slog.Logger {
	if format == logJSON {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(&multilineHandler{inner: slog.NewTextHandler(w, nil), w: w, mu: new(sync.Mutex)})
}

// multilineHandler is slog's text handler, except that a string or error
// value holding a line break is written after the record instead of inside
// it: a line naming its key, indented by a tab, then each line of the
// value, indented by two:
//
//	time=… level=ERROR msg="wymcp: contained fault" … exception.stacktrace="(9 lines below)"
//		exception.stacktrace:
//			goroutine 42 [running]:
//			…
//
// In the record the value is replaced by "(N lines below)". The text
// handler would write it quoted, its line breaks escaped: a stack of a few
// kilobytes on one line, which a reader cannot follow. Every line of the
// value starts with a tab, so nothing in it can pass for a record of its
// own, and a collector's multiline rule ("a line starting with whitespace
// continues the one before") keeps the record whole; control characters
// other than the tab are escaped. -log-format json needs none of this: the
// value stays one JSON string.
//
// Only the record's own attributes are moved (groups included), not those
// added with WithAttrs: the binary adds none that span lines.
type multilineHandler struct {
	inner slog.Handler
	w     io.Writer
	// mu serialises every record with its lines below, across the handlers
	// WithAttrs and WithGroup derive: the text handler's own lock covers
	// only its one write.
	mu *sync.Mutex
	// prefix is the groups opened with WithGroup, "a.b.", which the keys of
	// the lines below are qualified with, as the text handler qualifies them.
	prefix string
}

func (h *multilineHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *multilineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(as)
	return &c
}

func (h *multilineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.prefix = h.prefix + name + "."
	return &c
}

// block is one multi-line value, written below its record.
type block struct{ key, text string }

func (h *multilineHandler) Handle(ctx context.Context, r slog.Record) error {
	var blocks []block
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(lift(a, h.prefix, &blocks))
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(blocks) == 0 {
		return h.inner.Handle(ctx, r)
	}
	if err := h.inner.Handle(ctx, out); err != nil {
		return err
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString("\t")
		b.WriteString(bl.key)
		b.WriteString(":\n")
		for line := range strings.SplitSeq(strings.TrimRight(bl.text, "\r\n"), "\n") {
			b.WriteString("\t\t")
			b.WriteString(escapeControl(strings.TrimSuffix(line, "\r")))
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}

// lift returns a with every multi-line value in it (in groups too) replaced
// by a note, and appends the values to blocks under their qualified keys.
func lift(a slog.Attr, prefix string, blocks *[]block) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		gprefix := prefix
		if a.Key != "" {
			gprefix = prefix + a.Key + "."
		}
		attrs := v.Group()
		lifted := make([]any, len(attrs))
		for i, ga := range attrs {
			lifted[i] = lift(ga, gprefix, blocks)
		}
		return slog.Group(a.Key, lifted...)
	case slog.KindString:
		return liftText(a.Key, v.String(), a, prefix, blocks)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			return liftText(a.Key, err.Error(), a, prefix, blocks)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func liftText(key, text string, a slog.Attr, prefix string, blocks *[]block) slog.Attr {
	text = strings.TrimRight(text, "\r\n")
	if !strings.Contains(text, "\n") {
		return a
	}
	*blocks = append(*blocks, block{key: prefix + key, text: text})
	return slog.String(key, fmt.Sprintf("(%d lines below)", strings.Count(text, "\n")+1))
}

// escapeControl escapes the control characters of a line, except the tab
// (a Go stack indents with tabs), as Go would quote them.
func escapeControl(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r != '\t' && unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ---- the process-wide log hooks

// The binary's dependencies log through process-wide hooks: OpenTelemetry
// reports errors to otel.SetErrorHandler's handler (the standard log
// package by default) and logs through otel.SetLogger's (stdr, again the
// log package), gRPC through grpclog (stderr, its own format), and any
// other code through the log package or slog.Default. init points each at
// the logger of the run in progress (current), so that all of them come out
// in the run's format. They are set once, before anything runs: grpclog's
// is not safe to change while gRPC runs.

// current is the logger of the run in progress; nil outside a run.
var current atomic.Pointer[slog.Logger]

// fallback takes what is logged outside a run (nothing in the binary, whose
// run is the whole process).
var fallback = slog.New(slog.NewTextHandler(os.Stderr, nil))

// useLogger makes logger the process's until the returned function is
// called (at the end of run). A run that starts while another is in
// progress (tests run several) takes the hooks over; the first one's end
// leaves them with the second.
func useLogger(logger *slog.Logger) (restore func()) {
	current.Store(logger)
	return func() { current.CompareAndSwap(logger, nil) }
}

func processLogger() *slog.Logger {
	if l := current.Load(); l != nil {
		return l
	}
	return fallback
}

func init() {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(otelErrors.handle))
	// OpenTelemetry's logr verbosity V(n) is slog level -n: below Info,
	// so only its errors are written, as with its default logger.
	otel.SetLogger(logr.FromSlogHandler(currentHandler{}))
	grpclog.SetLoggerV2(newGRPCLogger(os.Getenv))
	slog.SetDefault(slog.New(currentHandler{}))
}

// currentHandler hands each record to the current run's handler, with the
// attributes and groups added to it on the way.
type currentHandler struct {
	// with applies the WithAttrs and WithGroup calls made so far, in order.
	with func(slog.Handler) slog.Handler
}

func (h currentHandler) handler() slog.Handler {
	inner := processLogger().Handler()
	if h.with != nil {
		inner = h.with(inner)
	}
	return inner
}

func (h currentHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.handler().Enabled(ctx, l)
}

func (h currentHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h currentHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return currentHandler{with: h.then(func(in slog.Handler) slog.Handler { return in.WithAttrs(as) })}
}

func (h currentHandler) WithGroup(name string) slog.Handler {
	return currentHandler{with: h.then(func(in slog.Handler) slog.Handler { return in.WithGroup(name) })}
}

func (h currentHandler) then(f func(slog.Handler) slog.Handler) func(slog.Handler) slog.Handler {
	if h.with == nil {
		return f
	}
	prev := h.with
	return func(in slog.Handler) slog.Handler { return f(prev(in)) }
}

// otelErrors takes the errors OpenTelemetry reports other than the failed
// exports, which the exporters' wrappers log with their endpoint
// (otel.go): at most one line per exportLogInterval.
var otelErrors = &otelErrorLog{limit: throttle{interval: exportLogInterval}}

// exportLogInterval is how often a failure that persists is logged again:
// a dead collector fails every export, and must not flood the log.
const exportLogInterval = time.Minute

// otelErrorLog is otel's error handler: the errors it is handed, throttled.
type otelErrorLog struct{ limit throttle }

func (l *otelErrorLog) handle(err error) {
	if _, ok := errors.AsType[*exportError](err); ok {
		return // logged by the exporter's wrapper, with its endpoint
	}
	if errors.Is(err, context.Canceled) {
		// The periodic metric reader's collection cut short by the stop:
		// nothing was lost that the flush at exit does not report.
		return
	}
	ok, suppressed := l.limit.allow(time.Now())
	if !ok {
		return
	}
	attrs := []any{"err", err}
	if suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed)
	}
	processLogger().Warn("OpenTelemetry error", attrs...)
}

// grpcLogger is gRPC's logger, into the current run's. Like gRPC's
// default it writes errors only, unless GRPC_GO_LOG_SEVERITY_LEVEL (info,
// warning) and GRPC_GO_LOG_VERBOSITY_LEVEL ask for more.
type grpcLogger struct {
	min       slog.Level
	verbosity int
}

func newGRPCLogger(getenv func(string) string) grpcLogger {
	l := grpcLogger{min: slog.LevelError}
	switch strings.ToLower(getenv("GRPC_GO_LOG_SEVERITY_LEVEL")) {
	case "warning":
		l.min = slog.LevelWarn
	case "info":
		l.min = slog.LevelInfo
	}
	l.verbosity, _ = strconv.Atoi(getenv("GRPC_GO_LOG_VERBOSITY_LEVEL"))
	return l
}

func (l grpcLogger) log(level slog.Level, msg string) {
	if level >= l.min {
		processLogger().Log(context.Background(), level, "grpc: "+strings.TrimSuffix(msg, "\n"))
	}
}

func (l grpcLogger) Info(args ...any)   { l.log(slog.LevelInfo, fmt.Sprint(args...)) }
func (l grpcLogger) Infoln(args ...any) { l.log(slog.LevelInfo, fmt.Sprintln(args...)) }
func (l grpcLogger) Infof(f string, args ...any) {
	l.log(slog.LevelInfo, fmt.Sprintf(f, args...))
}
func (l grpcLogger) Warning(args ...any)   { l.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (l grpcLogger) Warningln(args ...any) { l.log(slog.LevelWarn, fmt.Sprintln(args...)) }
func (l grpcLogger) Warningf(f string, args ...any) {
	l.log(slog.LevelWarn, fmt.Sprintf(f, args...))
}
func (l grpcLogger) Error(args ...any)   { l.log(slog.LevelError, fmt.Sprint(args...)) }
func (l grpcLogger) Errorln(args ...any) { l.log(slog.LevelError, fmt.Sprintln(args...)) }
func (l grpcLogger) Errorf(f string, args ...any) {
	l.log(slog.LevelError, fmt.Sprintf(f, args...))
}

// Fatal and its kin exit, as grpclog.LoggerV2 requires.
func (l grpcLogger) Fatal(args ...any) {
	l.log(slog.LevelError, fmt.Sprint(args...))
	os.Exit(1)
}
func (l grpcLogger) Fatalln(args ...any) {
	l.log(slog.LevelError, fmt.Sprintln(args...))
	os.Exit(1)
}
func (l grpcLogger) Fatalf(f string, args ...any) {
	l.log(slog.LevelError, fmt.Sprintf(f, args...))
	os.Exit(1)
}
func (l grpcLogger) V(level int) bool { return level <= l.verbosity }
