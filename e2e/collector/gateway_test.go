package collector

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGatewayTrace: one trace across the gateway's hop (docs/design.md §10,
// docs/operations.md "Running as a gateway"). An upstream cmd/wymcp (the
// demo tools) and a gateway cmd/wymcp -tools none -upstreams FILE in front
// of it (prefix up_) both export OTLP to the same real collector, as two
// services. One tools/call of up_echo with a traceparent in its _meta must
// leave, all in the caller's trace:
//
//   - the gateway's SERVER span "tools/call up_echo", child of the caller's
//     span;
//   - the gateway's CLIENT span "tools/call up_echo", child of that SERVER
//     span, naming the upstream (server.address, server.port) and its name
//     of the tool (wymcp.upstream.tool "echo");
//   - the upstream's SERVER span "tools/call echo", child of the CLIENT
//     span (the trace context went across in the forwarded request);
//
// and the gateway's mcp.client.operation.duration metric must have a point
// for the hop.
func TestGatewayTrace(t *testing.T) {
	if v := os.Getenv(envRun); v == "" || v == "0" {
		t.Skip(envRun + " is not set: skipping the end-to-end check against a real OpenTelemetry Collector")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	collectorBin := buildCollector(t, root)
	serverBin := buildServer(t, root, dir)
	col := startCollector(t, collectorBin, dir)

	const (
		upstreamService = "wymcp-e2e-upstream"
		gatewayService  = "wymcp-e2e-gateway"
		prefix          = "up_"
	)
	otel := func(service string) []string {
		return []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + col.httpAddr,
			"OTEL_SERVICE_NAME=" + service,
			"OTEL_METRIC_EXPORT_INTERVAL=500",
			"OTEL_BSP_SCHEDULE_DELAY=100",
		}
	}

	upstreamURL, upstreamProc := startServer(t, serverBin, dir, upstreamService, otel(upstreamService))
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatalf("the upstream's URL %q: %v", upstreamURL, err)
	}
	file := filepath.Join(dir, "upstreams.yaml")
	config := fmt.Sprintf("upstreams:\n  - name: demo\n    url: %s\n    prefix: %s\n", upstreamURL, prefix)
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	gatewayURL, gatewayProc := startServer(t, serverBin, dir, gatewayService, otel(gatewayService),
		"-tools", "none", "-upstreams", file)

	traceID, callerSpan := randomHex(t, 16), randomHex(t, 8)
	traceparent := "00-" + traceID + "-" + callerSpan + "-01"
	client := &http.Client{Timeout: 10 * time.Second}
	status, answer := post(t, client, gatewayURL, "7", "tools/call", prefix+"echo",
		`"name":"`+prefix+`echo","arguments":{"text":"across the hop"}`,
		`"traceparent":"`+traceparent+`","tracestate":"e2e=gateway",`, nil)
	if status != 200 || !bytes.Contains(answer, []byte(`"text":"across the hop"`)) || bytes.Contains(answer, []byte(`"isError":true`)) {
		t.Fatalf("tools/call %secho through the gateway: HTTP %d %s", prefix, status, answer)
	}
	client.CloseIdleConnections()

	// Stopped in order, each flushing its telemetry on exit: the gateway
	// (which closes its connections to the upstream), then the upstream.
	if err := gatewayProc.stop(exitTimeout); err != nil {
		t.Fatalf("the gateway after SIGTERM: %v", err)
	}
	if err := upstreamProc.stop(exitTimeout); err != nil {
		t.Fatalf("the upstream after SIGTERM: %v", err)
	}

	gw := waitFor(t, col, gatewayService,
		[]string{"tools/call " + prefix + "echo"}, []string{"mcp.client.operation.duration"})
	up := waitFor(t, col, upstreamService, []string{"tools/call echo"}, nil)

	// The spans of the caller's trace, by service and kind.
	inTrace := func(o output, name string, kind int, kindName string) span {
		t.Helper()
		var found []span
		for _, s := range o.spans {
			if s.TraceID == traceID && s.Name == name && enumIs(s.Kind, kind, kindName) {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			var all []string
			for _, s := range o.spans {
				all = append(all, fmt.Sprintf("%s (kind %s, trace %s)", s.Name, s.Kind, s.TraceID))
			}
			t.Fatalf("%d %s spans %q in trace %s, want 1; the service's spans: %q", len(found), kindName, name, traceID, all)
		}
		return found[0]
	}
	server := inTrace(gw, "tools/call "+prefix+"echo", spanKindServer, "SPAN_KIND_SERVER")
	hop := inTrace(gw, "tools/call "+prefix+"echo", spanKindClient, "SPAN_KIND_CLIENT")
	upstream := inTrace(up, "tools/call echo", spanKindServer, "SPAN_KIND_SERVER")
	t.Logf("trace %s: caller %s → gateway SERVER %s → gateway CLIENT %s → upstream SERVER %s",
		traceID, callerSpan, server.SpanID, hop.SpanID, upstream.SpanID)

	for _, c := range []struct {
		what         string
		s            span
		parent, name string
	}{
		{"the gateway's SERVER span", server, callerSpan, "the caller's span (traceparent in _meta)"},
		{"the gateway's CLIENT span", hop, server.SpanID, "the gateway's SERVER span"},
		{"the upstream's SERVER span", upstream, hop.SpanID, "the gateway's CLIENT span"},
	} {
		if c.s.ParentSpanID != c.parent {
			t.Errorf("%s %q: parent %s, want %s %s", c.what, c.s.Name, c.s.ParentSpanID, c.name, c.parent)
		}
		// The caller's tracestate travels with the trace, across the hop.
		if c.s.TraceState != "e2e=gateway" {
			t.Errorf("%s %q: trace state %q, want the caller's %q", c.what, c.s.Name, c.s.TraceState, "e2e=gateway")
		}
		if c.s.scope != "github.com/wymcp/wymcp" {
			t.Errorf("%s %q: scope %q, want github.com/wymcp/wymcp", c.what, c.s.Name, c.s.scope)
		}
		if _, ok := attrs(c.s.Attributes)["error.type"]; ok || enumIs(c.s.Status.Code, statusCodeError, "STATUS_CODE_ERROR") {
			t.Errorf("%s %q: error.type %q, status %s on a good call", c.what, c.s.Name, attrs(c.s.Attributes)["error.type"], c.s.Status.Code)
		}
	}

	// The served name on the gateway's SERVER and CLIENT spans, the
	// upstream's on the upstream's span and in the hop's
	// wymcp.upstream.tool; the hop names the upstream it went to, and its
	// request id is the one the upstream answered.
	for _, c := range []struct {
		what string
		s    span
		want map[string]string
	}{
		{"the gateway's SERVER span", server, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": prefix + "echo", "gen_ai.operation.name": "execute_tool",
			"mcp.protocol.version": protocolVersion, "jsonrpc.request.id": "7",
		}},
		{"the gateway's CLIENT span", hop, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": prefix + "echo", "gen_ai.operation.name": "execute_tool",
			"mcp.protocol.version": protocolVersion, "server.address": u.Hostname(), "server.port": u.Port(),
			"jsonrpc.request.id": attrs(upstream.Attributes)["jsonrpc.request.id"], "wymcp.upstream.tool": "echo",
		}},
		{"the upstream's SERVER span", upstream, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
			"mcp.protocol.version": protocolVersion,
		}},
	} {
		a := attrs(c.s.Attributes)
		for k, v := range c.want {
			if a[k] != v {
				t.Errorf("%s %q: %s = %q, want %q", c.what, c.s.Name, k, a[k], v)
			}
		}
	}
	if id := attrs(hop.Attributes)["jsonrpc.request.id"]; id == "" {
		t.Errorf("the gateway's CLIENT span has no jsonrpc.request.id")
	}

	// The hop's metric, from the gateway: a histogram in seconds with a
	// point for tools/call up_echo (the served name) at the upstream,
	// without error.type.
	var last *metric
	for i, m := range gw.metrics {
		if m.Name == "mcp.client.operation.duration" {
			last = &gw.metrics[i]
		}
	}
	if last.scope != "github.com/wymcp/wymcp" || last.Unit != "s" || last.Histogram == nil {
		t.Fatalf("mcp.client.operation.duration: scope %q, unit %q, histogram %v; want github.com/wymcp/wymcp, a histogram in s",
			last.scope, last.Unit, last.Histogram != nil)
	}
	var points []string
	found := false
	for _, dp := range last.Histogram.DataPoints {
		a := attrs(dp.Attributes)
		points = append(points, fmt.Sprint(a, " count ", strings.Trim(string(dp.Count), `"`)))
		if a["mcp.method.name"] == "tools/call" && a["gen_ai.tool.name"] == prefix+"echo" && a["error.type"] == "" &&
			a["server.address"] == u.Hostname() && a["server.port"] == u.Port() &&
			strings.Trim(string(dp.Count), `"`) == "1" {
			found = true
		}
	}
	if !found {
		t.Errorf("mcp.client.operation.duration has no point {tools/call, %secho, %s:%s} with count 1: %q", prefix, u.Hostname(), u.Port(), points)
	}
}

// spanKindClient is OTLP's SPAN_KIND_CLIENT.
const spanKindClient = 3
