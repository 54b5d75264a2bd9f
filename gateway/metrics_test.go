package gateway_test

import (
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// TestMetrics: wymcp.upstream.connected is 1 for an upstream connected,
// 0 for one pending; wymcp.upstream.tools.left_out counts the tools the
// conflict rule leaves out, by upstream.
func TestMetrics(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("x", "a x"), says("y", "a y"))
	down := serveOrigin(t, says("z", "z"))
	down.down.Store(true)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts := gateway.Options{
		Tools:     []*tools.Tool{says("x", "local x"), says("y", "local y")},
		Upstreams: []upstream.Options{a.up("a", ""), down.up("down", "")},
	}
	opts.Server.MeterProvider = mp
	g, _ := open(t, opts)
	got := gauges(t, reader)
	want := map[string]int64{
		"wymcp.upstream.connected a": 1, "wymcp.upstream.connected down": 0,
		"wymcp.upstream.tools.left_out a": 2, "wymcp.upstream.tools.left_out down": 0,
	}
	if len(got) != len(want) {
		t.Errorf("gauges %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	// Closed, the gateway observes nothing more.
	g.Close()
	if got := gauges(t, reader); len(got) != 0 {
		t.Errorf("after Close: %v", got)
	}
}

// gauges reads the gateway's gauges: "name upstream" → value.
func gauges(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/wymcp/wymcp/gateway" {
			continue
		}
		for _, m := range sm.Metrics {
			g, ok := m.Data.(metricdata.Gauge[int64])
			if !ok {
				t.Fatalf("%s is %T", m.Name, m.Data)
			}
			for _, p := range g.DataPoints {
				up, _ := p.Attributes.Value("wymcp.upstream")
				out[m.Name+" "+up.AsString()] = p.Value
			}
		}
	}
	return out
}
