package toolrun_test

import (
	"context"
	"math"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	type report struct {
		progress float64
		total    float64
		message  string
	}
	var got []report
	ctx := toolrun.WithProgress(t.Context(), func(p float64, total *float64, msg string) {
		r := report{progress: p, message: msg, total: -1}
		if total != nil {
			r.total = *total
		}
		got = append(got, r)
	})
	ten := 10.0
	tool := toolrun.Must(toolrun.NewRaw("p", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			toolrun.ReportProgress(ctx, 1, &ten, "one")
			toolrun.ReportProgress(ctx, 2, nil, "two")
			toolrun.ReportProgress(ctx, 2, nil, "two again") // MUST increase: dropped
			toolrun.ReportProgress(ctx, 1.5, nil, "back")    // dropped
			toolrun.ReportProgress(ctx, math.NaN(), nil, "nan")
			toolrun.ReportProgress(ctx, 3, &ten, "three")
			return nil, nil
		}))
	if out := tool.Call(ctx, nil); out.Kind != toolrun.OutcomeOK {
		t.Fatalf("kind %v", out.Kind)
	}
	want := []report{{1, 10, "one"}, {2, -1, "two"}, {3, 10, "three"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("report %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestProgressWithoutSink(t *testing.T) {
	t.Parallel()
	toolrun.ReportProgress(t.Context(), 1, nil, "nobody listens") // must not panic
	if ctx := toolrun.WithProgress(t.Context(), nil); ctx != t.Context() {
		t.Fatal("a nil sink should leave the context as it is")
	}
}
