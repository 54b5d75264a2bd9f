package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// metricsPath is where -metrics-addr serves the metrics.
const metricsPath = "/metrics"

// newPrometheus makes the reader of -metrics-addr, the OpenTelemetry
// Prometheus exporter, and the handler that serves what it reads. The
// meter provider takes the reader beside the OTLP one (setupOTel), so a
// scrape sees the same instruments as a collector, named the Prometheus
// way: mcp.server.operation.duration (seconds) is
// mcp_server_operation_duration_seconds, wymcp.rejections is
// wymcp_rejections_total, attributes are labels with underscores. The
// registry is the exporter's own, not the process-wide default: it holds
// only those instruments (and target_info, the resource).
func newPrometheus(logger *slog.Logger) (sdkmetric.Reader, http.Handler, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return nil, nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
	return exp, h, nil
}

// metricsServer is the scrape endpoint's own HTTP server, on its own
// listener: the MCP endpoint's checks (Host, Origin, auth) and limits do
// not apply to it, and a scraper never competes with the calls for
// -max-in-flight.
type metricsServer struct {
	srv *http.Server
	ln  net.Listener
	url string
}

// listenMetrics opens -metrics-addr; serve starts answering on it.
func listenMetrics(addr string, h http.Handler, logger *slog.Logger) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metricsPath, h)
	return &metricsServer{
		ln:  ln,
		url: fmt.Sprintf("http://%s%s", ln.Addr(), metricsPath),
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}, nil
}

// serve answers scrapes until close; a listener that fails is logged (the
// MCP endpoint keeps serving).
func (m *metricsServer) serve(logger *slog.Logger) {
	if err := m.srv.Serve(m.ln); !errors.Is(err, http.ErrServerClosed) {
		logger.Error("metrics endpoint stopped", "addr", m.ln.Addr().String(), "err", err)
	}
}

// close stops the endpoint, served or not. run calls it after the MCP
// server has stopped, so that a drain can be watched to its end; a scrape
// in progress has a second to finish.
func (m *metricsServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if m.srv.Shutdown(ctx) != nil {
		_ = m.srv.Close()
	}
	_ = m.ln.Close()
}
