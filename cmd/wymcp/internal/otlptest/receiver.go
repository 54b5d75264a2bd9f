// Package otlptest is an in-process OTLP receiver for tests: the real OTLP
// exporters (HTTP/protobuf or gRPC) send to it on the loopback, and the test
// reads back the spans and metrics that arrived, as the collector would see
// them. It is built on the OTLP protobuf types only (go.opentelemetry.io/
// proto/otlp), which the exporters depend on already; the collector's own
// receiver would pull in some 120 more modules.
package otlptest

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Receiver collects what OTLP exporters send it. Its methods are safe for
// concurrent use.
type Receiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricpb.Metric
	// resources are the resource attributes of each export, spans and
	// metrics alike.
	resources []map[string]string
	// changed is closed and replaced whenever something arrives.
	changed chan struct{}

	close func()
	// URL is the base URL of an HTTP receiver ("http://127.0.0.1:port");
	// exporters post to URL+"/v1/traces" and URL+"/v1/metrics".
	URL string
	// Addr is the host:port of a gRPC receiver.
	Addr string
}

func newReceiver() *Receiver { return &Receiver{changed: make(chan struct{})} }

// NewHTTP starts a receiver for OTLP/HTTP with protobuf bodies, gzipped or
// not, on a loopback port. Close it when done.
func NewHTTP() *Receiver {
	rc := newReceiver()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var req coltracepb.ExportTraceServiceRequest
		if !decode(w, r, &req) {
			return
		}
		rc.addTraces(&req)
		reply(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		var req colmetricpb.ExportMetricsServiceRequest
		if !decode(w, r, &req) {
			return
		}
		rc.addMetrics(&req)
		reply(w, &colmetricpb.ExportMetricsServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	rc.URL, rc.close = srv.URL, srv.Close
	return rc
}

// NewGRPC starts a receiver for OTLP/gRPC (trace and metrics services,
// plaintext) on a loopback port. Close it when done.
func NewGRPC() (*Receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := newReceiver()
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, traceService{rc: rc})
	colmetricpb.RegisterMetricsServiceServer(srv, metricsService{rc: rc})
	go func() { _ = srv.Serve(ln) }()
	rc.Addr, rc.close = ln.Addr().String(), srv.Stop
	return rc, nil
}

// Close stops the receiver.
func (rc *Receiver) Close() { rc.close() }

// Spans returns the spans received so far, in arrival order.
func (rc *Receiver) Spans() []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*tracepb.Span(nil), rc.spans...)
}

// Metrics returns the metric data received so far, in arrival order (a
// metric exported twice appears twice).
func (rc *Receiver) Metrics() []*metricpb.Metric {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*metricpb.Metric(nil), rc.metrics...)
}

// Resources returns the resource attributes of every resource received so
// far, spans' and metrics' alike, in arrival order.
func (rc *Receiver) Resources() []map[string]string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]map[string]string(nil), rc.resources...)
}

// Wait blocks until cond, called with the receiver's spans and metrics after
// each arrival (and once at the start), returns true, or until ctx ends or
// timeout passes; it reports whether cond held.
func (rc *Receiver) Wait(ctx context.Context, timeout time.Duration, cond func(spans []*tracepb.Span, metrics []*metricpb.Metric) bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		rc.mu.Lock()
		ok := cond(rc.spans, rc.metrics)
		changed := rc.changed
		rc.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

func (rc *Receiver) addTraces(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		rc.resources = append(rc.resources, Attrs(rs.GetResource().GetAttributes()))
		for _, ss := range rs.GetScopeSpans() {
			rc.spans = append(rc.spans, ss.GetSpans()...)
		}
	}
	close(rc.changed)
	rc.changed = make(chan struct{})
}

func (rc *Receiver) addMetrics(req *colmetricpb.ExportMetricsServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rm := range req.GetResourceMetrics() {
		rc.resources = append(rc.resources, Attrs(rm.GetResource().GetAttributes()))
		for _, sm := range rm.GetScopeMetrics() {
			rc.metrics = append(rc.metrics, sm.GetMetrics()...)
		}
	}
	close(rc.changed)
	rc.changed = make(chan struct{})
}

// maxBody bounds a request body, decompressed.
const maxBody = 64 << 20

func decode(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "only application/x-protobuf", http.StatusUnsupportedMediaType)
		return false
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		defer gz.Close()
		body = gz
	}
	b, err := io.ReadAll(io.LimitReader(body, maxBody))
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	rc *Receiver
}

func (s traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.rc.addTraces(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	colmetricpb.UnimplementedMetricsServiceServer
	rc *Receiver
}

func (s metricsService) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	s.rc.addMetrics(req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// Attr returns the value of the attribute key on span (strings as is, ints
// in decimal), and whether it is there.
func Attr(span *tracepb.Span, key string) (string, bool) {
	return attrOf(span.GetAttributes(), key)
}
