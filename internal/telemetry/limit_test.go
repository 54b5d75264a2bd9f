package telemetry

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp/internal/wire"
)

// TestLimiter: one record per interval, the ones held back counted and
// reported by the next one let through; under contention, exactly one of
// many simultaneous records is let through.
func TestLimiter(t *testing.T) {
	t.Parallel()
	var l Limiter
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		at         time.Duration
		ok         bool
		suppressed int64
	}{
		{0, true, 0},
		{time.Millisecond, false, 0},
		{logInterval - 1, false, 0},
		{logInterval, true, 2},
		{logInterval + 1, false, 0},
		{3 * logInterval, true, 1},
		{5 * logInterval, true, 0},
	} {
		ok, n := l.Allow(t0.Add(tc.at))
		if ok != tc.ok || n != tc.suppressed {
			t.Errorf("Allow at +%v = %v, %d; want %v, %d", tc.at, ok, n, tc.ok, tc.suppressed)
		}
	}

	var c Limiter
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if ok, _ := c.Allow(t0); ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 1 {
		t.Errorf("%d of 64 simultaneous records let through, want 1", n)
	}
	if ok, n := c.Allow(t0.Add(logInterval)); !ok || n != 63 {
		t.Errorf("after the interval: %v, %d; want true, 63", ok, n)
	}
}

// TestLimiterIntervalAndReset: a Limiter with an Interval of its own lets
// one record through per Interval; Reset lets the next one through at once,
// with nothing held back to report.
func TestLimiterIntervalAndReset(t *testing.T) {
	t.Parallel()
	l := Limiter{Interval: time.Minute}
	t0 := time.Unix(1_000_000, 0)
	if ok, _ := l.Allow(t0); !ok {
		t.Fatal("the first record was held back")
	}
	if ok, _ := l.Allow(t0.Add(59 * time.Second)); ok {
		t.Error("a record within the minute was let through")
	}
	if ok, n := l.Allow(t0.Add(time.Minute)); !ok || n != 1 {
		t.Errorf("a minute later: %v, %d; want true, 1", ok, n)
	}
	l.Allow(t0.Add(time.Minute + time.Second))
	l.Reset()
	if ok, n := l.Allow(t0.Add(time.Minute + 2*time.Second)); !ok || n != 0 {
		t.Errorf("after Reset: %v, %d; want true, 0", ok, n)
	}
}

// TestLimiterReportsABurst: records held back after the last one written
// are reported once their interval is over, when no written record has
// reported them: a burst that stops is still counted, once.
func TestLimiterReportsABurst(t *testing.T) {
	t.Parallel()
	reported := make(chan int64, 4)
	l := Limiter{Report: func(n int64) { reported <- n }}
	now := time.Now()
	for range 5 {
		l.Allow(now)
	}
	select {
	case n := <-reported:
		if n != 4 {
			t.Errorf("reported %d held back, want 4", n)
		}
	case <-time.After(10 * logInterval):
		t.Fatal("the burst was never reported")
	}
	// Held back, then reported by the next record written: not again.
	l.Allow(now)
	if ok, n := l.Allow(now.Add(logInterval)); !ok || n != 1 {
		t.Fatalf("the next record: %v, %d; want true, 1", ok, n)
	}
	select {
	case n := <-reported:
		t.Errorf("reported %d again after a record carried it", n)
	case <-time.After(2 * logInterval):
	}
}

// records is a slog.Handler that keeps every record's message and
// attributes.
type records struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message, "level": rec.Level.String()}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	r.recs = append(r.recs, m)
	r.mu.Unlock()
	return nil
}

func (r *records) all() []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.recs...)
}

// TestFaultLogThrottled: a fault cannot amplify the log. 200 tool panics
// in a burst log one record with its stack, not 200; a supervisor fault in
// the same burst is logged too (each containment has its own limit); the
// first tool fault after the interval is logged with its stack and the
// number left out; and every one of the 201 tool spans carries its
// exception event with the whole stack (docs/design.md §7).
func TestFaultLogThrottled(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	logs := &records{}
	o := New(Options{TracerProvider: tp, MeterProvider: metricnoop.NewMeterProvider(), Logger: slog.New(logs)})
	stack := []byte("goroutine 7 [running]:\nmain.boom()\n\t/src/boom.go:12 +0x1d\n" + strings.Repeat("frame\n", 900))

	t0 := time.Unix(1_000_000, 0)
	fault := func(i int, where string, at time.Time) {
		op := &Op{}
		msg := &wire.Message{Kind: wire.KindRequest, Method: wire.MethodToolsCall}
		ctx := o.Start(context.Background(), op, httptest.NewRequest("POST", "/mcp", nil), msg, nil)
		op.SetTool("boom")
		op.fault(ctx, where, "tool exploded", stack, at)
		op.End(ctx, 0, true)
	}
	for i := range 200 {
		fault(i, "tool", t0.Add(time.Duration(i)*time.Millisecond))
		if i == 100 {
			fault(i, "supervisor", t0.Add(time.Duration(i)*time.Millisecond))
		}
	}
	recs := logs.all()
	if len(recs) != 2 {
		t.Fatalf("%d log records for a burst of 200 tool faults and 1 supervisor fault, want 2: %v", len(recs), recs)
	}
	for i, where := range []string{"tool", "supervisor"} {
		r := recs[i]
		if r["msg"] != "wymcp: contained fault" || r["level"] != "ERROR" || r["containment"] != where ||
			r["exception.stacktrace"] != string(stack) || r["exception.message"] != "tool exploded" {
			t.Errorf("record %d: %v, want the %s fault with its stack", i, r, where)
		}
		if _, ok := r["suppressed"]; ok {
			t.Errorf("record %d says %s were suppressed before any was", i, r["suppressed"])
		}
	}

	fault(200, "tool", t0.Add(logInterval+time.Second/2))
	recs = logs.all()
	if len(recs) != 3 {
		t.Fatalf("%d log records after the interval, want 3", len(recs))
	}
	if r := recs[2]; r["containment"] != "tool" || r["suppressed"] != "199" || r["exception.stacktrace"] != string(stack) {
		t.Errorf("the first record after the interval: %v, want the tool fault with its stack and suppressed=199", r)
	}

	ended := spans.Ended()
	if len(ended) != 202 {
		t.Fatalf("%d spans, want 202", len(ended))
	}
	for i, s := range ended {
		found := false
		for _, ev := range s.Events() {
			if ev.Name != "exception" {
				continue
			}
			for _, a := range ev.Attributes {
				found = found || (a.Key == "exception.stacktrace" && a.Value.AsString() == string(stack))
			}
		}
		if !found {
			t.Errorf("span %d (%s) has no exception event with the stack: %v", i, s.Name(), s.Events())
		}
	}
}
