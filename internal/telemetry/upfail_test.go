package telemetry

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// upfailLog keeps the records' suppressed counts and error types.
type upfailLog struct {
	mu   sync.Mutex
	recs []map[string]string
}

func (l *upfailLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *upfailLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *upfailLog) WithGroup(string) slog.Handler            { return l }
func (l *upfailLog) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	l.mu.Lock()
	l.recs = append(l.recs, m)
	l.mu.Unlock()
	return nil
}

// TestUpstreamFailuresThrottle: per error.type, the first failure of an
// interval is logged, the others are held back, and the next record
// logged, or the Limiter's report when none follows, says how many, in
// the same format.
func TestUpstreamFailuresThrottle(t *testing.T) {
	log := &upfailLog{}
	f := NewUpstreamFailures(nil, slog.New(log), "up")
	f.Interval = time.Hour
	ctx := context.Background()
	fail := UpstreamFailure{Tool: "t", ErrorType: "upstream_unreachable", Detail: "refused"}
	for range 3 {
		f.Record(ctx, fail)
	}
	f.Record(ctx, UpstreamFailure{Tool: "t", ErrorType: "502", Status: 502})
	// The interval is over: the next record says how many were held back.
	f.limiter(failedMsg, "upstream_unreachable").next.Store(0)
	f.Record(ctx, fail)
	// One more held back, and none follows: the report says it.
	f.Record(ctx, fail)
	f.limiter(failedMsg, "upstream_unreachable").flush()

	want := []map[string]string{
		{"msg": "upstream call failed", "level": "WARN", "upstream": "up", "tool": "t", "error.type": "upstream_unreachable", "detail": "refused"},
		{"msg": "upstream call failed", "level": "WARN", "upstream": "up", "tool": "t", "error.type": "502", "status": "502"},
		{"msg": "upstream call failed", "level": "WARN", "upstream": "up", "tool": "t", "error.type": "upstream_unreachable", "detail": "refused", "suppressed": "2"},
		{"msg": "upstream call failed", "level": "WARN", "upstream": "up", "error.type": "upstream_unreachable", "suppressed": "1"},
	}
	if len(log.recs) != len(want) {
		t.Fatalf("records %v, want %v", log.recs, want)
	}
	for i := range want {
		if len(log.recs[i]) != len(want[i]) {
			t.Errorf("record %d: %v, want %v", i, log.recs[i], want[i])
			continue
		}
		for k, v := range want[i] {
			if log.recs[i][k] != v {
				t.Errorf("record %d: %v, want %v", i, log.recs[i], want[i])
				break
			}
		}
	}
}

// TestUpstreamRetriesAndCircuit: retries are logged in their own format,
// throttled apart from the failures of their error.type, and counted;
// every change of the circuit is logged and counted by its state.
func TestUpstreamRetriesAndCircuit(t *testing.T) {
	log := &upfailLog{}
	reader := sdkmetric.NewManualReader()
	f := NewUpstreamFailures(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), slog.New(log), "up")
	f.Interval = time.Hour
	ctx := context.Background()
	f.Record(ctx, UpstreamFailure{Tool: "t", ErrorType: "502", Status: 502})
	for range 3 {
		f.Retried(ctx, "t", "502")
	}
	f.limiter(retriedMsg, "502").flush()
	f.CircuitChanged(true, "evidence")
	f.CircuitChanged(false, "a probe")
	want := []map[string]string{
		{"msg": "upstream call failed", "level": "WARN", "upstream": "up", "tool": "t", "error.type": "502", "status": "502"},
		{"msg": "upstream call retried", "level": "INFO", "upstream": "up", "tool": "t", "error.type": "502"},
		{"msg": "upstream call retried", "level": "INFO", "upstream": "up", "error.type": "502", "suppressed": "2"},
		{"msg": "upstream circuit opened: its calls are answered at once until a probe succeeds", "level": "WARN", "upstream": "up", "why": "evidence"},
		{"msg": "upstream circuit closed", "level": "INFO", "upstream": "up", "why": "a probe"},
	}
	if len(log.recs) != len(want) {
		t.Fatalf("records %v, want %v", log.recs, want)
	}
	for i := range want {
		if !maps.Equal(log.recs[i], want[i]) {
			t.Errorf("record %d: %v, want %v", i, log.recs[i], want[i])
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				key := m.Name
				for _, kv := range dp.Attributes.ToSlice() {
					if kv.Key != keyUpstream {
						key += " " + kv.Value.String()
					}
				}
				got[key] += dp.Value
			}
		}
	}
	wantCounts := map[string]int64{
		"wymcp.upstream.failures 502":           1,
		"wymcp.upstream.retries 502":            3,
		"wymcp.upstream.circuit.changes open":   1,
		"wymcp.upstream.circuit.changes closed": 1,
	}
	if !maps.Equal(got, wantCounts) {
		t.Errorf("counters %v, want %v", got, wantCounts)
	}
}
