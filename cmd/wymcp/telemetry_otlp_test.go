package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/cmd/wymcp/internal/otlptest"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The trace contexts of the end-to-end test: the client puts one in
// params._meta (the parent) and a proxy's is in the HTTP headers (linked).
const (
	metaTraceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaSpanID   = "00f067aa0ba902b7"
	metaParent   = "00-" + metaTraceID + "-" + metaSpanID + "-01"
	headerTrace  = "0af7651916cd43dd8448eb211c80319c"
	headerSpan   = "b7ad6b7169203331"
	headerParent = "00-" + headerTrace + "-" + headerSpan + "-01"
)

// panickingTool is the handler of the e2e test's "panic" tool: its name
// must appear in the stack the span's exception event carries.
func panickingTool(context.Context, []byte) (*protocol.CallToolResult, error) {
	var deep func(int) int
	deep = func(n int) int { // a few frames, so the stack is no stub
		if n == 0 {
			panic("e2e: the tool panicked")
		}
		return deep(n-1) + 1
	}
	return protocol.TextResult(string(rune(deep(8)))), nil
}

// panicsOnEncode panics when encoded: a result carrying it is a fault past
// the tool (supervisor containment).
type panicsOnEncode struct{}

func (panicsOnEncode) MarshalJSON() ([]byte, error) { panic("encoder exploded") }

// recordingHandler keeps slog records for assertions.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) find(msg string) []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]string
	for _, r := range h.records {
		if r.Message != msg || r.Level != slog.LevelError {
			continue
		}
		m := map[string]string{}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

// TestTelemetryOTLP sends real traffic through the real OTLP exporters to an
// OTLP receiver on the loopback and checks what a collector would receive
// (docs/design.md §7): span names and attributes, the parent from
// params._meta with the HTTP context linked, status Error iff error.type,
// the exception event of a contained panic with its whole stack, the
// rejection record, and mcp.server.operation.duration.
func TestTelemetryOTLP(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			testTelemetryOTLP(t, proto)
		})
	}
}

func testTelemetryOTLP(t *testing.T, proto string) {
	ctx := t.Context()
	var (
		rc   *otlptest.Receiver
		texp sdktrace.SpanExporter
		mexp sdkmetric.Exporter
		err  error
	)
	switch proto {
	case "grpc":
		if rc, err = otlptest.NewGRPC(); err != nil {
			t.Fatal(err)
		}
		texp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(rc.Addr), otlptracegrpc.WithInsecure())
		if err == nil {
			mexp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(rc.Addr), otlpmetricgrpc.WithInsecure())
		}
	default:
		rc = otlptest.NewHTTP()
		texp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(rc.URL+"/v1/traces"))
		if err == nil {
			mexp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(rc.URL+"/v1/metrics"))
		}
	}
	t.Cleanup(rc.Close)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
	logs := &recordingHandler{}

	echo := tools.Must(tools.NewRaw("echo", "Echoes its text.",
		[]byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return protocol.TextResult(in.Text), nil
		}))
	boom := tools.Must(tools.NewRaw("panic", "Panics.", []byte(`{"type":"object"}`), panickingTool))
	badResult := tools.Must(tools.NewRaw("bad_result", "Returns a result that cannot be encoded.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{}, StructuredContent: panicsOnEncode{}}, nil
		}))
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, &wymcp.Options{TracerProvider: tp, MeterProvider: mp, Logger: slog.New(logs)}, echo, boom, badResult)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	hs := mcptest.Serve(t, srv, info)

	withTrace := func(r mcptest.RPC) mcptest.RPC {
		r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"traceparent":"`+metaParent+`","tracestate":"vendor=meta",`, 1)
		return r.With("Traceparent", headerParent)
	}
	hs.Send(t, withTrace(mcptest.ToolCall("echo", `{"text":"hi"}`))).ExpectResult(t, "1")
	res := hs.Send(t, mcptest.ToolCall("panic", `{}`)).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); !isErr || strings.Contains(text, "e2e") {
		t.Errorf("panic tool: isError %v, text %q: want isError and the fixed text only", isErr, text)
	}
	hs.Send(t, mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", "other")).ExpectError(t, 400, -32020, "1")
	hs.Send(t, mcptest.ToolCall("bad_result", `{}`)).ExpectError(t, 200, -32603, "1")

	// Flush both pipelines, as cmd/wymcp does on exit.
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatalf("trace flush: %v", err)
	}
	if err := mp.ForceFlush(ctx); err != nil {
		t.Fatalf("metric flush: %v", err)
	}
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	if !rc.Wait(ctx, 10*time.Second, func(spans []*tracepb.Span, ms []*metricpb.Metric) bool {
		return len(spans) >= 4 && len(ms) > 0
	}) {
		t.Fatalf("the receiver got %d spans and %d metrics, want 4 spans and metrics", len(rc.Spans()), len(rc.Metrics()))
	}
	spans := rc.Spans()
	if len(spans) != 4 {
		t.Errorf("got %d spans, want one per message (4)", len(spans))
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.GetName()] = append(byName[s.GetName()], s)
		if s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("span %q kind = %v, want SERVER", s.GetName(), s.GetKind())
		}
		// Status Error iff error.type is set.
		_, hasErrType := otlptest.Attr(s, "error.type")
		if isErr := s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR; isErr != hasErrType {
			t.Errorf("span %q: status %v with error.type set = %v", s.GetName(), s.GetStatus(), hasErrType)
		}
	}
	// A call rejected at the protocol stage is rejected before its tool is
	// looked up: its span is named for the method alone.
	if len(byName["tools/call echo"]) != 1 || len(byName["tools/call"]) != 1 {
		t.Fatalf("span names %v, want tools/call echo, tools/call panic, tools/call", keys(byName))
	}
	traced, rejected := byName["tools/call echo"][0], byName["tools/call"][0]

	// The traced call: parent from _meta, the HTTP context linked.
	if got := hex.EncodeToString(traced.GetTraceId()); got != metaTraceID {
		t.Errorf("trace id = %s, want _meta's %s", got, metaTraceID)
	}
	if got := hex.EncodeToString(traced.GetParentSpanId()); got != metaSpanID {
		t.Errorf("parent span id = %s, want _meta's %s", got, metaSpanID)
	}
	if got := traced.GetTraceState(); got != "vendor=meta" {
		t.Errorf("trace state = %q, want _meta's", got)
	}
	if links := traced.GetLinks(); len(links) != 1 || hex.EncodeToString(links[0].GetTraceId()) != headerTrace ||
		hex.EncodeToString(links[0].GetSpanId()) != headerSpan {
		t.Errorf("links = %v, want the HTTP header's context", links)
	}
	wantAttrs(t, traced, map[string]string{
		"mcp.method.name":          "tools/call",
		"mcp.protocol.version":     "2026-07-28",
		"jsonrpc.request.id":       "1",
		"gen_ai.tool.name":         "echo",
		"gen_ai.operation.name":    "execute_tool",
		"network.transport":        "tcp",
		"network.protocol.name":    "http",
		"network.protocol.version": "1.1",
		"client.address":           "127.0.0.1",
	}, "error.type", "rpc.response.status_code")
	if port, _ := otlptest.Attr(traced, "client.port"); port == "" || port == "0" {
		t.Errorf("client.port = %q, want the client's port", port)
	}
	if traced.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_UNSET {
		t.Errorf("a good call's status = %v, want unset", traced.GetStatus())
	}

	// The rejected call (Mcp-Name disagrees): stage, HTTP status and code.
	wantAttrs(t, rejected, map[string]string{
		"error.type":                "-32020",
		"rpc.response.status_code":  "-32020",
		"wymcp.rejection.stage":     "protocol",
		"http.response.status_code": "400",
	})

	// The contained panic: tool_error, and the exception event in full.
	panics := byName["tools/call panic"]
	if len(panics) != 1 {
		t.Fatalf("spans named %q: %d, want 1", "tools/call panic", len(panics))
	}
	ps := panics[0]
	wantAttrs(t, ps, map[string]string{"error.type": "tool_error"}, "rpc.response.status_code")
	var exc map[string]string
	for _, ev := range ps.GetEvents() {
		if ev.GetName() == "exception" {
			exc = otlptest.Attrs(ev.GetAttributes())
		}
	}
	if exc == nil {
		t.Fatalf("no exception event on the panic span; events %v", ps.GetEvents())
	}
	if exc["exception.type"] != "string" || exc["exception.message"] != "e2e: the tool panicked" || exc["wymcp.containment"] != "tool" {
		t.Errorf("exception event = type %q, message %q, containment %q", exc["exception.type"], exc["exception.message"], exc["wymcp.containment"])
	}
	stack := exc["exception.stacktrace"]
	if !strings.Contains(stack, "wymcp.panickingTool") || !strings.Contains(stack, "panic(") {
		t.Errorf("stack does not show the panicking function:\n%s", stack)
	}
	// The SDK's own capture stops at 2048 bytes; ours is the whole stack.
	if len(stack) <= 2048 {
		t.Errorf("stack is %d bytes, want the whole stack (> 2048):\n%s", len(stack), stack)
	}

	// One Error log record with the same fields and the span's ids.
	var rec map[string]string
	for _, r := range logs.find("wymcp: contained fault") {
		if r["containment"] == "tool" {
			if rec != nil {
				t.Fatal("two fault log records for the tool panic")
			}
			rec = r
		}
	}
	if rec == nil {
		t.Fatal("no fault log record for the tool panic")
	}
	if rec["trace_id"] != hex.EncodeToString(ps.GetTraceId()) || rec["span_id"] != hex.EncodeToString(ps.GetSpanId()) {
		t.Errorf("log ids %s/%s, span ids %x/%x", rec["trace_id"], rec["span_id"], ps.GetTraceId(), ps.GetSpanId())
	}
	if rec["exception.stacktrace"] != stack || rec["exception.type"] != exc["exception.type"] ||
		rec["exception.message"] != exc["exception.message"] || rec["containment"] != "tool" {
		t.Errorf("log record fields differ from the span's: %v", rec)
	}

	// Supervisor containment: -32603 on the wire, the crash on the span.
	if bad := byName["tools/call bad_result"]; len(bad) != 1 {
		t.Errorf("spans named %q: %d, want 1", "tools/call bad_result", len(bad))
	} else {
		wantAttrs(t, bad[0], map[string]string{"error.type": "-32603", "rpc.response.status_code": "-32603"})
		var exc map[string]string
		for _, ev := range bad[0].GetEvents() {
			if ev.GetName() == "exception" {
				exc = otlptest.Attrs(ev.GetAttributes())
			}
		}
		if exc["wymcp.containment"] != "supervisor" || !strings.Contains(exc["exception.message"], "encoder exploded") ||
			!strings.Contains(exc["exception.stacktrace"], "panicsOnEncode.MarshalJSON") {
			t.Errorf("supervisor exception event = %v", exc)
		}
	}

	// The duration metric: a histogram in seconds with the semconv buckets,
	// per method, tool and outcome.
	var dur *metricpb.Metric
	var rejections bool
	for _, m := range rc.Metrics() {
		switch m.GetName() {
		case "mcp.server.operation.duration":
			dur = m
		case "wymcp.rejections":
			for _, dp := range m.GetSum().GetDataPoints() {
				a := otlptest.Attrs(dp.GetAttributes())
				rejections = rejections || (a["wymcp.rejection.stage"] == "protocol" && a["http.response.status_code"] == "400" &&
					a["rpc.response.status_code"] == "-32020" && dp.GetAsInt() == 1)
			}
		}
	}
	if !rejections {
		t.Error("no wymcp.rejections point for the protocol-stage rejection")
	}
	if dur == nil || dur.GetUnit() != "s" || dur.GetHistogram() == nil {
		t.Fatalf("mcp.server.operation.duration = %v, want a histogram in s", dur)
	}
	points := map[string]*metricpb.HistogramDataPoint{}
	for _, dp := range dur.GetHistogram().GetDataPoints() {
		a := otlptest.Attrs(dp.GetAttributes())
		points[a["gen_ai.tool.name"]+" "+a["error.type"]] = dp
		if a["mcp.method.name"] != "tools/call" || a["mcp.protocol.version"] != "2026-07-28" || a["network.transport"] != "tcp" {
			t.Errorf("duration point attributes = %v", a)
		}
	}
	want := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
	for key, count := range map[string]uint64{"echo ": 1, " -32020": 1, "panic tool_error": 1, "bad_result -32603": 1} {
		dp := points[key]
		if dp == nil {
			t.Errorf("no duration point for %q; have %v", key, keys(points))
			continue
		}
		if dp.GetCount() != count {
			t.Errorf("duration %q count = %d, want %d", key, dp.GetCount(), count)
		}
		if got := dp.GetExplicitBounds(); len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("duration buckets = %v, want %v", got, want)
		}
	}
}

// wantAttrs checks span attributes: want holds exact values, absent keys
// that must not be set.
func wantAttrs(t *testing.T, s *tracepb.Span, want map[string]string, absent ...string) {
	t.Helper()
	got := otlptest.Attrs(s.GetAttributes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q", s.GetName(), k, got[k], v)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("span %q: %s = %q, want it unset", s.GetName(), k, v)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
