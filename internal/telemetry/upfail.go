package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// keyUpstream names the upstream (its Options.Name) on the gateway's
// failure records.
const keyUpstream = "wymcp.upstream"

// UpstreamFailures records the failures of one upstream's forwarded calls
// (docs/design.md §10a, docs/telemetry.md): each one counted in
// wymcp.upstream.failures by its error.type, and logged in one format,
// "upstream call failed", throttled per error.type, so that an upstream
// down under load costs the log one record a second per class of failure,
// the number held back carried by the next record (or by a record of its
// own when none follows), while the counter has every one.
type UpstreamFailures struct {
	name    string
	logger  *slog.Logger
	counter metric.Int64Counter
	// Interval is how often a record of one error.type is let through; 0
	// means a second. Set it before the first Record.
	Interval time.Duration

	// limits holds a *Limiter per error.type: a closed set (the §10a
	// failure types, an HTTP status, timeout), and one per error.type of
	// the retries.
	limits sync.Map

	// mp makes, on first use, the counters of the rarer events.
	mp               metric.MeterProvider
	once             sync.Once
	retries, changes metric.Int64Counter
}

// NewUpstreamFailures returns the failure recorder of the upstream name,
// logging to logger (nothing when nil) and counting to mp (the
// OpenTelemetry global when nil).
func NewUpstreamFailures(mp metric.MeterProvider, logger *slog.Logger, name string) *UpstreamFailures {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	f := &UpstreamFailures{name: name, logger: logger, mp: mp}
	f.counter, _ = mp.Meter(ScopeName).Int64Counter("wymcp.upstream.failures",
		metric.WithUnit("{failure}"),
		metric.WithDescription("Forwarded calls the gateway could not answer with the upstream's answer, by upstream and error.type."))
	return f
}

// UpstreamFailure is one failed forwarded call, as logged.
type UpstreamFailure struct {
	// Tool is the name of the tool called, as the gateway serves it.
	Tool string
	// ErrorType is the hop's error.type: the class of the failure.
	ErrorType string
	// Status is the upstream's HTTP status, 0 when none is in question.
	Status int
	// Detail is the cause, for the operator (never sent to the client).
	Detail string
}

// Record counts the failure and logs it unless its class has been logged
// within the interval.
func (f *UpstreamFailures) Record(ctx context.Context, fl UpstreamFailure) {
	ctx = context.WithoutCancel(ctx)
	f.counter.Add(ctx, 1, metric.WithAttributes(
		attribute.String(keyUpstream, f.name),
		attribute.String(keyErrorType, fl.ErrorType)))
	if f.logger == nil {
		return
	}
	ok, suppressed := f.limiter(failedMsg, fl.ErrorType).Allow(time.Now())
	if !ok {
		return
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs,
		slog.String("upstream", f.name),
		slog.String("tool", truncate(fl.Tool)),
		slog.String(keyErrorType, fl.ErrorType))
	if fl.Status != 0 {
		attrs = append(attrs, slog.Int("status", fl.Status))
	}
	if fl.Detail != "" {
		attrs = append(attrs, slog.String("detail", fl.Detail))
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int64("suppressed", suppressed))
	}
	f.logger.LogAttrs(ctx, slog.LevelWarn, failedMsg, attrs...)
}

// The messages of the records: one format each.
const (
	failedMsg  = "upstream call failed"
	retriedMsg = "upstream call retried"
)

// limiter returns the Limiter of the records msg of the class errorType,
// made on its first record.
func (f *UpstreamFailures) limiter(msg, errorType string) *Limiter {
	key := [2]string{msg, errorType}
	if l, ok := f.limits.Load(key); ok {
		return l.(*Limiter)
	}
	level := slog.LevelWarn
	if msg == retriedMsg {
		level = slog.LevelInfo
	}
	l := &Limiter{Interval: f.Interval}
	l.Report = func(n int64) {
		// The same record, without a call's fields: how many of the class
		// were held back and never reported by a later record.
		f.logger.LogAttrs(context.Background(), level, msg,
			slog.String("upstream", f.name),
			slog.String(keyErrorType, errorType),
			slog.Int64("suppressed", n))
	}
	actual, _ := f.limits.LoadOrStore(key, l)
	return actual.(*Limiter)
}

// Retried counts a call made once more after it failed with errorType
// (wymcp.upstream.retries) and logs it, throttled per error.type as the
// failures are.
func (f *UpstreamFailures) Retried(ctx context.Context, tool, errorType string) {
	ctx = context.WithoutCancel(ctx)
	f.once.Do(f.makeMore)
	f.retries.Add(ctx, 1, metric.WithAttributes(
		attribute.String(keyUpstream, f.name),
		attribute.String(keyErrorType, errorType)))
	if f.logger == nil {
		return
	}
	if ok, suppressed := f.limiter(retriedMsg, errorType).Allow(time.Now()); ok {
		attrs := []slog.Attr{slog.String("upstream", f.name), slog.String("tool", truncate(tool)), slog.String(keyErrorType, errorType)}
		if suppressed > 0 {
			attrs = append(attrs, slog.Int64("suppressed", suppressed))
		}
		f.logger.LogAttrs(ctx, slog.LevelInfo, retriedMsg, attrs...)
	}
}

// CircuitChanged counts a change of the upstream's circuit breaker
// (wymcp.upstream.circuit.changes, by its new state) and logs it: a
// breaker changes state at most once a probe interval, so every change is
// logged.
func (f *UpstreamFailures) CircuitChanged(open bool, why string) {
	f.once.Do(f.makeMore)
	state, level, msg := "closed", slog.LevelInfo, "upstream circuit closed"
	if open {
		state, level, msg = "open", slog.LevelWarn, "upstream circuit opened: its calls are answered at once until a probe succeeds"
	}
	ctx := context.Background()
	f.changes.Add(ctx, 1, metric.WithAttributes(
		attribute.String(keyUpstream, f.name),
		attribute.String("wymcp.upstream.circuit.state", state)))
	if f.logger != nil {
		f.logger.LogAttrs(ctx, level, msg, slog.String("upstream", f.name), slog.String("why", why))
	}
}

// makeMore makes the counters of retries and circuit changes.
func (f *UpstreamFailures) makeMore() {
	m := f.mp.Meter(ScopeName)
	f.retries, _ = m.Int64Counter("wymcp.upstream.retries",
		metric.WithUnit("{retry}"),
		metric.WithDescription("Forwarded calls made once more after a failure, by upstream and the error.type of the failure."))
	f.changes, _ = m.Int64Counter("wymcp.upstream.circuit.changes",
		metric.WithUnit("{change}"),
		metric.WithDescription("Changes of an upstream's circuit breaker, by upstream and the state it changed to."))
}
