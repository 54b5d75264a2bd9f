package gateway

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instrumentation is the gateway's meter (docs/telemetry.md).
const instrumentation = "github.com/wymcp/wymcp/gateway"

// instrument registers the gateway's gauges, observed at each collection
// from the upstreams as they are then; Close unregisters them. Neither
// costs a call anything.
//
//   - wymcp.upstream.connected: 1 for an upstream connected, 0 for one
//     pending, by upstream.
//   - wymcp.upstream.tools.left_out: the upstream's tools the conflict
//     rule leaves out now (docs/design.md §10c), by upstream.
func (g *Gateway) instrument() metric.Registration {
	mp := g.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentation)
	connected, err := m.Int64ObservableGauge("wymcp.upstream.connected",
		metric.WithUnit("{upstream}"),
		metric.WithDescription("Whether an upstream is connected (1) or tried again in the background (0)."))
	if err != nil {
		return nil
	}
	leftOut, err := m.Int64ObservableGauge("wymcp.upstream.tools.left_out",
		metric.WithUnit("{tool}"),
		metric.WithDescription("The upstream's tools not served because an earlier one (a local tool, or an upstream's listed before it) is served under the same name."))
	if err != nil {
		return nil
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		left := make(map[string]int64, len(g.leftOut))
		for c := range g.leftOut {
			left[c.upstream]++
		}
		for _, l := range g.ups {
			v := int64(0)
			if l.u != nil {
				v = 1
			}
			attrs := metric.WithAttributes(attribute.String("wymcp.upstream", l.o.Name))
			o.ObserveInt64(connected, v, attrs)
			o.ObserveInt64(leftOut, left[l.o.Name], attrs)
		}
		return nil
	}, connected, leftOut)
	if err != nil {
		return nil
	}
	return reg
}
