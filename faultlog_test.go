package wymcp_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestFaultLogThrottled: a fault cannot amplify the log. A burst of 200
// tool panics is logged as one record with its stack a second, not 200
// (the count of the others goes on the next record, internal/telemetry's
// TestFaultLogThrottled), while every one of the 200 spans carries its
// exception event with the whole stack (docs/design.md §7).
func TestFaultLogThrottled(t *testing.T) {
	t.Parallel()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	logs := &logCapture{}
	_, hs := newTestServer(t, &wymcp.Options{TracerProvider: tp, Logger: slog.New(logs)}, nil)

	const n = 200
	begin := time.Now()
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := c; i < n; i += 8 {
				res := hs.Send(t, mcptest.ToolCall("panic", `{}`).WithID(i)).ExpectResult(t, fmt.Sprint(i))
				if text, isErr := mcptest.ToolText(t, res); !isErr || text != "Tool execution failed: internal error" {
					t.Errorf("call %d: %q isError %v", i, text, isErr)
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(begin)

	withStack := 0
	for _, r := range logs.records() {
		if r.Msg == "wymcp: contained fault" && strings.Contains(r.attrs["exception.stacktrace"], "panic(") {
			withStack++
		}
	}
	// One record an interval (a second) at most: one in a burst that takes
	// less than a second, however slow the machine.
	if limit := 1 + int(took/time.Second); withStack < 1 || withStack > limit {
		t.Errorf("%d fault records with a stack for %d panics in %v, want 1 to %d", withStack, n, took, limit)
	}

	ended := spans.Ended()
	if len(ended) != n {
		t.Fatalf("%d spans, want %d", len(ended), n)
	}
	for _, s := range ended {
		found := false
		for _, ev := range s.Events() {
			for _, a := range ev.Attributes {
				found = found || (ev.Name == "exception" && a.Key == "exception.stacktrace" && strings.Contains(a.Value.AsString(), "panic("))
			}
		}
		if !found {
			t.Errorf("span %s has no exception event with the stack", s.Name())
		}
	}
}
