package serve

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"runtime/metrics"
	"runtime/trace"
	"strconv"
	"time"
)

// Metrics are the runtime metrics the tail study reads (bench/cmd/tail):
// how often the collector runs and what it scans, what it costs the CPU,
// and how long goroutines wait to run.
var Metrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/gc/scan/globals:bytes",
	"/gc/scan/heap:bytes",
	"/gc/scan/stack:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/allocs:bytes",
	"/gc/heap/allocs:objects",
	"/cpu/classes/total:cpu-seconds",
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/sched/pauses/total/gc:seconds",
	"/sched/latencies:seconds",
}

// Sample is one reading of Metrics: a number, or a histogram's bucket
// boundaries and counts.
type Sample struct {
	Value   float64   `json:"value,omitempty"`
	Buckets []float64 `json:"buckets,omitempty"`
	Counts  []uint64  `json:"counts,omitempty"`
}

// serveDiagnostics serves, on RTMETRICS_ADDR when it is set, the runtime
// metrics (/metrics, JSON) and an execution trace (/trace?seconds=N), away
// from the measured listener.
func serveDiagnostics() {
	addr := os.Getenv("RTMETRICS_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		samples := make([]metrics.Sample, len(Metrics))
		for i, name := range Metrics {
			samples[i].Name = name
		}
		metrics.Read(samples)
		out := make(map[string]Sample, len(samples))
		for _, s := range samples {
			switch s.Value.Kind() {
			case metrics.KindUint64:
				out[s.Name] = Sample{Value: float64(s.Value.Uint64())}
			case metrics.KindFloat64:
				out[s.Name] = Sample{Value: s.Value.Float64()}
			case metrics.KindFloat64Histogram:
				h := s.Value.Float64Histogram()
				// JSON has no infinities: the open ends become the
				// largest finite values.
				b := make([]float64, len(h.Buckets))
				for i, v := range h.Buckets {
					b[i] = max(min(v, math.MaxFloat64), -math.MaxFloat64)
				}
				out[s.Name] = Sample{Buckets: b, Counts: h.Counts}
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/trace", func(w http.ResponseWriter, r *http.Request) {
		secs, _ := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64)
		if secs <= 0 {
			secs = 1
		}
		if err := trace.Start(w); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		time.Sleep(time.Duration(secs * float64(time.Second)))
		trace.Stop()
	})
	go func() { _ = http.ListenAndServe(addr, mux) }()
}
