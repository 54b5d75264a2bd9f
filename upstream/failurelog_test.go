package upstream_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// logRecords is a slog.Handler that keeps every record, its attributes as
// strings.
type logRecords struct {
	mu   sync.Mutex
	recs []logRecord
}

type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.mu.Unlock()
	return nil
}

// of returns the records of msg about the upstream name.
func (l *logRecords) of(msg, name string) []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logRecord
	for _, r := range l.recs {
		if r.msg == msg && r.attrs["upstream"] == name {
			out = append(out, r)
		}
	}
	return out
}

// failureCounts returns wymcp.upstream.failures by upstream and error.type.
func failureCounts(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "wymcp.upstream.failures" {
				continue
			}
			if m.Unit != "{failure}" {
				t.Errorf("unit %q", m.Unit)
			}
			sum := m.Data.(metricdata.Sum[int64])
			if !sum.IsMonotonic {
				t.Error("wymcp.upstream.failures is not a counter")
			}
			for _, dp := range sum.DataPoints {
				up, _ := dp.Attributes.Value("wymcp.upstream")
				et, _ := dp.Attributes.Value("error.type")
				if dp.Attributes.Len() != 2 {
					t.Errorf("attributes %v, want wymcp.upstream and error.type", dp.Attributes.ToSlice())
				}
				if out[up.AsString()] == nil {
					out[up.AsString()] = map[string]int64{}
				}
				out[up.AsString()][et.AsString()] += dp.Value
			}
		}
	}
	return out
}

// TestFailuresLoggedAndCounted: every class of failure of a forwarded call
// (docs/design.md §10a: each error.type that is not the upstream's answer
// nor the client going away) is counted in wymcp.upstream.failures each
// time, and logged in one format, "upstream call failed", once per class
// and interval however many calls fail; an answer, a tool error and an
// upstream's JSON-RPC error are neither.
func TestFailuresLoggedAndCounted(t *testing.T) {
	t.Parallel()
	const k = 4 // calls per class
	logs := &logRecords{}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	type class struct {
		name   string
		opts   func(o *upstream.Options)
		up     *fakeUp
		legacy bool
		def    ocHandler // every tools/call's answer
		// want is the count per error.type after k calls; status and
		// detail the logged record's (detail: a part of it).
		want   map[string]int64
		status string
		detail string
		// loose: want's classes may share its count (when the upstream's
		// 401 is answered without a new token, and when with).
		loose bool
	}
	tokens := newOCTokenServer(t)
	classes := []*class{
		{name: "refused", opts: func(o *upstream.Options) { o.BreakerMinCalls = -1 },
			want: map[string]int64{"upstream_unreachable": k}, detail: "connection refused"},
		{name: "status", def: ocStatus(502, "text/plain", "bad gateway"), opts: func(o *upstream.Options) { o.BreakerMinCalls = -1 },
			want: map[string]int64{"502": k}, status: "502"},
		{name: "malformed", def: ocBody("text/plain", "hello"), opts: func(o *upstream.Options) { o.BreakerMinCalls = -1 },
			want: map[string]int64{"upstream_malformed": k}, detail: `the answer's Content-Type is "text/plain"`},
		{name: "large", def: ocBody("application/json", strings.Repeat(" ", 2048)), opts: func(o *upstream.Options) { o.MaxResponseBytes = 1024 },
			want: map[string]int64{"upstream_too_large": k}, detail: "larger than 1024 bytes"},
		{name: "headers", def: ocPadded(2048, "application/json", "{}"), opts: func(o *upstream.Options) { o.MaxResponseHeaderBytes = 1024 },
			want: map[string]int64{"upstream_too_large": k}, detail: "headers exceeded"},
		{name: "unauthorized", def: ocStatus(401, "text/plain", ""),
			want: map[string]int64{"upstream_unauthorized": k}, status: "401"},
		{name: "session", legacy: true, def: ocStatus(404, "text/plain", "no such session"),
			want: map[string]int64{"upstream_session_lost": k}, status: "404"},
		{name: "credentials", def: ocStatus(401, "text/plain", ""), opts: func(o *upstream.Options) { o.Credentials = ocClientCredentials(t, tokens.URL) },
			want: map[string]int64{"upstream_credentials": k, "upstream_unauthorized": 0}, detail: "invalid_client", loose: true},
		{name: "open", def: ocStatus(500, "text/plain", ""), opts: func(o *upstream.Options) { o.BreakerProbeInterval = time.Hour },
			want: map[string]int64{"500": 1, "upstream_unavailable": k - 1}, detail: "the circuit is open; the next try in "},
		{name: "timeout", def: ocBlock(nil, nil, nil), opts: func(o *upstream.Options) { o.CallTimeout = 50 * time.Millisecond },
			want: map[string]int64{"timeout": k}, detail: "no answer within the call's deadline"},
		{name: "busy", opts: func(o *upstream.Options) { o.MaxInFlight = 1 },
			want: map[string]int64{"upstream_busy": k}, detail: "MaxInFlight (1) calls in progress"},
		{name: "closed",
			want: map[string]int64{"upstream_closed": k}},
		// Not failures: the upstream answered.
		{name: "answers", want: map[string]int64{}},
		{name: "rpc", def: ocRPCError(200, `{"code":-32603,"message":"Internal error"}`), want: map[string]int64{}},
		{name: "toolerror", def: ocResult(`{"content":[{"type":"text","text":"no"}],"isError":true}`), want: map[string]int64{}},
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var set ocSet
	for _, c := range classes {
		c.up = newFakeUp(t, c.legacy)
		if c.def != nil {
			c.up.def = c.def
		}
		if c.name == "busy" {
			c.up.then(ocBlock(entered, release, nil))
		}
		o := ocOpts(c.up)
		o.Name, o.Prefix, o.Logger, o.MeterProvider = c.name, c.name+"_", slog.New(logs), mp
		if c.opts != nil {
			c.opts(&o)
		}
		set.add(o)
	}
	g := set.start(t, nil)
	for _, u := range g.ups {
		upstream.SetFailureLogInterval(u, time.Hour) // longer than any run
	}
	tokens.refuse.Store(true)

	for i, c := range classes {
		tool := c.name + "_t"
		switch c.name {
		case "refused":
			refuse(t, c.up.srv)
		case "closed":
			if err := g.ups[i].Close(); err != nil {
				t.Fatal(err)
			}
		case "busy":
			held := make(chan mcptest.Reply, 1)
			go func() { held <- g.callTool(t, tool) }()
			<-entered
			defer func() {
				close(release)
				ocExpectText(t, <-held, "ok", false)
			}()
		case "open":
			g.callTool(t, tool) // a failure, then the circuit opens
			upstream.OpenCircuit(g.ups[i])
		}
		for n := 0; n < k; n++ {
			if c.name == "open" && n == k-1 {
				break
			}
			rep := g.callTool(t, tool)
			if _, isErr := mcptest.ToolText(t, rep.ExpectResult(t, "1")); !isErr && len(c.want) > 0 {
				t.Errorf("%s: the call succeeded: %s", c.name, rep.Raw)
			}
		}
	}

	counts := failureCounts(t, reader)
	for _, c := range classes {
		t.Run(c.name, func(t *testing.T) {
			got := counts[c.name]
			classes := len(c.want)
			if c.loose {
				var sum, all int64
				for et, n := range got {
					if _, ok := c.want[et]; !ok {
						t.Errorf("wymcp.upstream.failures %v, want classes of %v", got, c.want)
					}
					sum += n
				}
				for _, n := range c.want {
					all += n
				}
				if sum != all {
					t.Errorf("wymcp.upstream.failures %v, want %d in all", got, all)
				}
				classes = len(got)
			} else if fmt.Sprint(got) != fmt.Sprint(c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("wymcp.upstream.failures %v, want %v", got, c.want)
			}
			recs := logs.of("upstream call failed", c.name)
			if len(recs) != classes {
				t.Fatalf("%d records, want one per class %v: %+v", len(recs), got, recs)
			}
			if len(recs) == 0 {
				return
			}
			for _, r := range recs {
				et := r.attrs["error.type"]
				if _, ok := c.want[et]; !ok || r.level != slog.LevelWarn || r.attrs["tool"] != c.name+"_t" {
					t.Errorf("record %+v, want level WARN, tool %s_t (the served name), error.type one of %v", r, c.name, c.want)
				}
				if _, ok := r.attrs["suppressed"]; ok {
					t.Errorf("the first record of a class says suppressed: %+v", r)
				}
			}
			last := recs[len(recs)-1]
			if last.attrs["status"] != c.status {
				t.Errorf("status %q, want %q: %+v", last.attrs["status"], c.status, last)
			}
			if !strings.Contains(last.attrs["detail"], c.detail) {
				t.Errorf("detail %q, want it to say %q", last.attrs["detail"], c.detail)
			}
		})
	}
}
