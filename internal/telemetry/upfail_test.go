package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
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
	f.limiter("upstream_unreachable").next.Store(0)
	f.Record(ctx, fail)
	// One more held back, and none follows: the report says it.
	f.Record(ctx, fail)
	f.limiter("upstream_unreachable").flush()

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
