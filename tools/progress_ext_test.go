package tools_test

import (
	"context"
	"math"
	"testing"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	type report struct {
		progress float64
		total    float64
		message  string
	}
	var got []report
	ctx := tools.WithProgress(t.Context(), func(p float64, total *float64, msg string) {
		r := report{progress: p, message: msg, total: -1}
		if total != nil {
			r.total = *total
		}
		got = append(got, r)
	})
	ten := 10.0
	tool := tools.Must(tools.NewRaw("p", "d", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ protocol.RawJSON) (*protocol.CallToolResult, error) {
			tools.ReportProgress(ctx, 1, &ten, "one")
			tools.ReportProgress(ctx, 2, nil, "two")
			tools.ReportProgress(ctx, 2, nil, "two again") // MUST increase: dropped
			tools.ReportProgress(ctx, 1.5, nil, "back")    // dropped
			tools.ReportProgress(ctx, math.NaN(), nil, "nan")
			tools.ReportProgress(ctx, 3, &ten, "three")
			return nil, nil
		}))
	if out := tool.Call(ctx, nil); out.Kind != tools.OutcomeOK {
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
	tools.ReportProgress(t.Context(), 1, nil, "nobody listens") // must not panic
	if ctx := tools.WithProgress(t.Context(), nil); ctx != t.Context() {
		t.Fatal("a nil sink should leave the context as it is")
	}
}
