package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestPrometheusScrape runs the program with -metrics-addr, makes a call
// and a rejected request, and scrapes /metrics as Prometheus would: the
// duration histogram and the rejection counter are there under their
// Prometheus names, with the MCP attributes as labels.
func TestPrometheusScrape(t *testing.T) {
	t.Parallel()
	s := start(t, "-metrics-addr", "127.0.0.1:0")
	if !strings.HasPrefix(s.metricsURL, "http://127.0.0.1:") || !strings.HasSuffix(s.metricsURL, "/metrics") {
		t.Fatalf("metrics URL %q", s.metricsURL)
	}
	if status, _ := s.post(t, t.Context(), "tools/call", "echo", callBody("echo", `{"text":"hi"}`)); status != http.StatusOK {
		t.Fatalf("echo: status %d", status)
	}
	// Not JSON: rejected before any method runs.
	if status, _ := s.ep.Post(t, t.Context(), mcptest.Raw("tools/call", "echo", `{"jsonrpc":`)); status != http.StatusBadRequest {
		t.Fatalf("a malformed body: status %d, want 400", status)
	}

	resp, err := http.Get(s.metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", s.metricsURL, resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q, want the Prometheus text format", ct)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing the scrape: %v\n%s", err, body)
	}

	duration := families["mcp_server_operation_duration_seconds"]
	if duration == nil || duration.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("no histogram mcp_server_operation_duration_seconds in:\n%s", body)
	}
	echo := find(duration, map[string]string{
		"mcp_method_name":       "tools/call",
		"gen_ai_tool_name":      "echo",
		"gen_ai_operation_name": "execute_tool",
		"mcp_protocol_version":  "2026-07-28",
		"network_transport":     "tcp",
	})
	if echo == nil {
		t.Errorf("no tools/call echo series in:\n%s", body)
	} else if h := echo.GetHistogram(); h.GetSampleCount() != 1 || len(h.GetBucket()) == 0 {
		t.Errorf("tools/call echo: %d samples, %d buckets; want 1 sample and the semconv buckets", h.GetSampleCount(), len(h.GetBucket()))
	}

	rejections := families["wymcp_rejections_total"]
	if rejections == nil || rejections.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("no counter wymcp_rejections_total in:\n%s", body)
	}
	parse := find(rejections, map[string]string{
		"wymcp_rejection_stage":     "parse",
		"http_response_status_code": "400",
		"rpc_response_status_code":  "-32700",
	})
	if parse == nil || parse.GetCounter().GetValue() != 1 {
		t.Errorf("want one parse rejection (400, -32700) in:\n%s", body)
	}
	if families["wymcp_calls_in_flight"] == nil {
		t.Errorf("no wymcp_calls_in_flight in:\n%s", body)
	}

	// Only /metrics is served there.
	if resp, err := http.Get(strings.TrimSuffix(s.metricsURL, "/metrics") + "/mcp"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /mcp on the metrics listener: %v %v, want 404", resp, err)
	} else {
		resp.Body.Close()
	}
}

// find returns the series of mf that has every one of labels.
func find(mf *dto.MetricFamily, labels map[string]string) *dto.Metric {
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			return m
		}
	}
	return nil
}
