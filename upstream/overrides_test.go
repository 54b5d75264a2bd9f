package upstream_test

// Options.Overrides (issue 40): the operator's name, title, description
// and hints for an upstream's tool; and Options.Refresh, the interval of
// Watch.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// ovConnect connects to the upstream at url under o (name "fake", the
// logger logs when not nil), and returns it with its served names.
func ovConnect(t *testing.T, o upstream.Options, logs *logRecords) (*upstream.Upstream, []string) {
	t.Helper()
	o.Name = "fake"
	o.Logger = slog.New(slog.DiscardHandler)
	if logs != nil {
		o.Logger = slog.New(logs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	return u, servedNames(u)
}

func servedNames(u *upstream.Upstream) []string {
	var names []string
	for _, tl := range u.Tools() {
		names = append(names, tl.Name())
	}
	return names
}

// listedTools returns the gateway's tools/list, each tool as compact JSON.
func listedTools(t *testing.T, gw *mcptest.Endpoint) []string {
	t.Helper()
	rep := gw.Send(t, mcptest.Call("tools/list", ""))
	rep.ExpectResult(t, "1")
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.Tools))
	for i, raw := range res.Tools {
		out[i] = mcptest.CompactJSON(t, string(raw))
	}
	return out
}

// A renamed tool is listed and called under its override's name (the
// prefix not added), with the override's title, description and hints;
// the upstream is called with its own name, in the body and in Mcp-Name;
// the prefixed name is no tool. A tool whose override says only a
// description keeps the rest of the upstream's.
func TestOverrideServesUnderItsName(t *testing.T) {
	t.Parallel()
	up := newRTUp(t, false, `"tools":[`+
		`{"name":"t","title":"T","description":"The upstream's.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"openWorldHint":true}},`+
		`{"name":"u","title":"U","description":"The upstream's.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]`,
		ocOK)
	u, names := ovConnect(t, upstream.Options{URL: up.URL, Prefix: "g_", Overrides: map[string]upstream.Override{
		"t": {Name: "renamed", Title: "Renamed", Description: "The operator's.", Annotations: &protocol.ToolAnnotations{DestructiveHint: ptr(true)}},
		"u": {Description: "The operator's too."},
	}}, nil)
	if !slices.Equal(names, []string{"renamed", "g_u"}) {
		t.Fatalf("served %q, want [renamed g_u]", names)
	}
	gw := rtServe(t, nil, u.Tools())

	want := []string{
		`{"name":"renamed","title":"Renamed","description":"The operator's.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`,
		`{"name":"g_u","title":"U","description":"The operator's too.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	}
	if got := listedTools(t, gw); !slices.Equal(got, want) {
		t.Errorf("tools/list:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	ocExpectText(t, gw.Send(t, mcptest.ToolCall("renamed", `{"x":1}`)), "ok", false)
	hs := up.callHeaders()
	if len(hs) != 1 || hs[0].Get("Mcp-Name") != "t" {
		t.Fatalf("the upstream's calls' headers %v, want one with Mcp-Name t", hs)
	}

	rep := gw.Send(t, mcptest.ToolCall("g_t", `{}`))
	rep.ExpectError(t, http.StatusOK, -32602, "1")
	if rep.Msg.Error.Message != "Unknown tool: g_t" {
		t.Errorf("message %q, want \"Unknown tool: g_t\"", rep.Msg.Error.Message)
	}
	if n := len(up.callHeaders()); n != 1 {
		t.Errorf("the upstream got %d calls, want 1", n)
	}
}

// The upstream is sent its own name in the body of a renamed tool's call.
func TestOverrideCallsTheUpstreamByItsName(t *testing.T) {
	t.Parallel()
	f := newFakeUp(t, false)
	o := ocOpts(f)
	o.Overrides = map[string]upstream.Override{"t": {Name: "renamed"}}
	g := newOCGateway(t, nil, o)
	ocExpectText(t, g.callTool(t, "renamed"), "ok", false)
	_, _, _, bodies := f.record()
	if len(bodies) != 1 || !strings.Contains(bodies[0], `"params":{"name":"t","arguments":{}`) {
		t.Fatalf("the upstream was sent %q, want a call of t", bodies)
	}
}

// An override's annotations are what retries trust: they replace the
// upstream's hints entirely, so they make a tool retried or not
// (Options.RetryIdempotent); an override without annotations keeps the
// upstream's.
func TestOverrideAnnotationsDecideRetries(t *testing.T) {
	t.Parallel()
	const (
		readOnly = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
		plain    = `{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}}`
	)
	for _, c := range []struct {
		name     string
		tool     string
		override upstream.Override
		calls    int32
		want     string
	}{
		{"not idempotent upstream, read-only override", plain,
			upstream.Override{Annotations: &protocol.ToolAnnotations{ReadOnlyHint: ptr(true)}}, 2, "ok"},
		{"not idempotent upstream, idempotent override, renamed", plain,
			upstream.Override{Name: "renamed", Annotations: &protocol.ToolAnnotations{IdempotentHint: ptr(true)}}, 2, "ok"},
		{"read-only upstream, override without hints", readOnly,
			upstream.Override{Annotations: &protocol.ToolAnnotations{}}, 1, "Upstream fake answered HTTP 502."},
		{"read-only upstream, override of the description only", readOnly,
			upstream.Override{Description: "Reads."}, 2, "ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeUp(t, false, ocStatus(502, "text/html", "bad gateway"))
			f.tool = c.tool
			o := ocOpts(f)
			o.RetryIdempotent = true
			o.Overrides = map[string]upstream.Override{"t": c.override}
			g := newOCGateway(t, nil, o)
			name := "g_t"
			if c.override.Name != "" {
				name = c.override.Name
			}
			rep := g.callTool(t, name)
			if c.want == "ok" {
				ocExpectText(t, rep, "ok", false)
			} else {
				ocToolError(t, rep, c.want)
			}
			if n := f.calls.Load(); n != c.calls {
				t.Errorf("the upstream got %d calls, want %d", n, c.calls)
			}
		})
	}
}

// The name rules: an override's name takes its name from the tool of the
// same upstream that the prefix would give it to (that one is left out);
// of two overrides naming the same, the first in the upstream's order
// wins (an invalid name is Options.Validate's to refuse: TestValidate);
// a renamed tool's own name no longer makes another's hashed; an override of a tool the upstream does
// not list is logged. Each left-out tool is logged with its reason.
func TestOverrideNameRules(t *testing.T) {
	t.Parallel()
	tool := func(n string) string { return `{"name":"` + n + `","inputSchema":{"type":"object"}}` }
	up := newRTUp(t, false, `"tools":[`+strings.Join([]string{
		tool("a"), tool("b"), tool("c"), tool("d"), tool("f g"), tool("f_g"),
	}, ",")+`]`, ocOK)
	logs := &logRecords{}
	u, names := ovConnect(t, upstream.Options{URL: up.URL, Overrides: map[string]upstream.Override{
		"a":    {Name: "b"},
		"c":    {Name: "x"},
		"d":    {Name: "x"},
		"f g":  {Name: "fg"},
		"nope": {Name: "n"},
	}}, logs)
	if want := []string{"b", "x", "fg", "f_g"}; !slices.Equal(names, want) {
		t.Fatalf("served %q, want %q", names, want)
	}

	reasons := map[string]string{}
	for _, r := range logs.of("upstream tool left out", "fake") {
		reasons[r.attrs["tool"]] = r.attrs["reason"]
	}
	wantReasons := map[string]string{
		"b": `its served name "b" is another tool's override's`,
		"d": `its override's name "x" is an earlier tool's override's`,
	}
	if len(reasons) != len(wantReasons) {
		t.Errorf("tools left out %v, want %v", reasons, wantReasons)
	}
	for tool, want := range wantReasons {
		if reasons[tool] != want {
			t.Errorf("%s left out because %q, want %q", tool, reasons[tool], want)
		}
	}
	unknown := logs.of("upstream tool override names no tool of the upstream", "fake")
	if len(unknown) != 1 || unknown[0].attrs["tool"] != "nope" || unknown[0].level != slog.LevelWarn {
		t.Errorf("unknown overrides logged: %+v, want one Warn naming nope", unknown)
	}

	// "b" calls the upstream's a.
	gw := rtServe(t, nil, u.Tools())
	ocExpectText(t, gw.Send(t, mcptest.ToolCall("b", `{}`)), "ok", false)
	if hs := up.callHeaders(); len(hs) != 1 || hs[0].Get("Mcp-Name") != "a" {
		t.Fatalf("headers %v, want a call of a", hs)
	}
}

// An override of a tool the upstream does not list is logged when the
// list is read and each time it changes, not when it is read unchanged
// nor per call.
func TestOverrideOfAnUnlistedToolLoggedPerChange(t *testing.T) {
	t.Parallel()
	var version atomic.Int32
	up := newRTUp(t, false, "", ocOK)
	up.listFn = func([]byte) string {
		if version.Load() == 0 {
			return `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`
		}
		return `"tools":[{"name":"t","inputSchema":{"type":"object"}},{"name":"u","inputSchema":{"type":"object"}}]`
	}
	logs := &logRecords{}
	u, _ := ovConnect(t, upstream.Options{URL: up.URL, Prefix: "g_", Overrides: map[string]upstream.Override{
		"t": {Name: "renamed"}, "gone": {Description: "Was here."},
	}}, logs)
	count := func() int { return len(logs.of("upstream tool override names no tool of the upstream", "fake")) }
	if n := count(); n != 1 {
		t.Fatalf("%d records after Connect, want 1", n)
	}
	gw := rtServe(t, nil, u.Tools())
	for range 3 {
		ocExpectText(t, gw.Send(t, mcptest.ToolCall("renamed", `{}`)), "ok", false)
	}
	if changed, err := u.Refresh(context.Background()); err != nil || changed {
		t.Fatalf("Refresh of the same list: changed %v, %v", changed, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d records after calls and an unchanged refresh, want 1", n)
	}
	version.Store(1)
	if changed, err := u.Refresh(context.Background()); err != nil || !changed {
		t.Fatalf("Refresh of a changed list: changed %v, %v", changed, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d records after the list changed, want 2", n)
	}
	if names := servedNames(u); !slices.Equal(names, []string{"renamed", "g_u"}) {
		t.Fatalf("served %q after the change, want [renamed g_u]", names)
	}
}

// A renamed tool's calls are named so by the gateway: its SERVER span and
// the CLIENT span of the hop (their names and gen_ai.tool.name), both
// duration metrics and the failure log; the CLIENT span also carries the
// upstream's name in wymcp.upstream.tool.
func TestOverrideNamesTheTelemetry(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logs := &logRecords{}

	f := newFakeUp(t, false, ocOK, ocStatus(503, "text/plain", ""))
	o := ocOpts(f)
	o.Overrides = map[string]upstream.Override{"t": {Name: "renamed"}}
	o.Logger, o.TracerProvider, o.MeterProvider = slog.New(logs), tp, mp
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := upstream.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	s, err := wymcp.New(gatewayInfo, &wymcp.Options{TracerProvider: tp, MeterProvider: mp}, u.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	gw := mcptest.Serve(t, s, gatewayInfo)
	rec.Reset()

	ocExpectText(t, gw.Send(t, mcptest.ToolCall("renamed", `{}`)), "ok", false)
	ocToolError(t, gw.Send(t, mcptest.ToolCall("renamed", `{}`)), "Upstream fake answered HTTP 503.")

	var server, client int
	for _, sp := range rec.Ended() {
		a := map[string]string{}
		for _, kv := range sp.Attributes() {
			a[string(kv.Key)] = kv.Value.String()
		}
		switch sp.SpanKind().String() {
		case "server":
			server++
		case "client":
			client++
			if a["wymcp.upstream.tool"] != "t" {
				t.Errorf("CLIENT span wymcp.upstream.tool %q, want t", a["wymcp.upstream.tool"])
			}
		}
		if sp.Name() != "tools/call renamed" || a["gen_ai.tool.name"] != "renamed" {
			t.Errorf("%s span %q, gen_ai.tool.name %q; want tools/call renamed, renamed", sp.SpanKind(), sp.Name(), a["gen_ai.tool.name"])
		}
	}
	if server != 2 || client != 2 {
		t.Errorf("%d SERVER and %d CLIENT spans, want 2 and 2", server, client)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || !strings.HasSuffix(m.Name, ".operation.duration") {
				continue
			}
			for _, dp := range h.DataPoints {
				if v, ok := dp.Attributes.Value("gen_ai.tool.name"); ok {
					points[m.Name+" "+v.String()] += dp.Count
				}
			}
		}
	}
	want := map[string]uint64{"mcp.server.operation.duration renamed": 2, "mcp.client.operation.duration renamed": 2}
	if len(points) != len(want) {
		t.Errorf("duration points by tool %v, want %v", points, want)
	}
	for k, n := range want {
		if points[k] != n {
			t.Errorf("duration points by tool %v, want %v", points, want)
			break
		}
	}

	failed := logs.of("upstream call failed", "fake")
	if len(failed) != 1 || failed[0].attrs["tool"] != "renamed" {
		t.Errorf("failure records %+v, want one naming renamed", failed)
	}
}

// Watch reads tools/list every Options.Refresh, when it is set, whatever
// the upstream's ttlMs (a minute when it gives none).
func TestWatchEveryRefresh(t *testing.T) {
	t.Parallel()
	var version atomic.Int32
	up := newRTUp(t, false, "", ocOK)
	up.listFn = func([]byte) string {
		if version.Load() == 0 {
			return `"tools":[{"name":"t","inputSchema":{"type":"object"}}]`
		}
		return `"tools":[{"name":"u","inputSchema":{"type":"object"}}]`
	}
	u, _ := ovConnect(t, upstream.Options{URL: up.URL, Prefix: "g_", Refresh: 5 * time.Millisecond}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan []string, 1)
	go u.Watch(ctx, func(ts []*tools.Tool) {
		var names []string
		for _, tl := range ts {
			names = append(names, tl.Name())
		}
		select {
		case changed <- names:
		default:
		}
	})
	version.Store(1)
	select {
	case names := <-changed:
		if !slices.Equal(names, []string{"g_u"}) {
			t.Fatalf("Watch handed %q, want [g_u]", names)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not read the changed list within 30 s at a Refresh of 5 ms (a minute without it)")
	}
}
