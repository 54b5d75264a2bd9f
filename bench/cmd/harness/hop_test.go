package main

import (
	"strings"
	"testing"

	"github.com/wymcp/wymcp/bench/loadgen"
)

func hp(front string, rep, conc int, rps, p50, p99, frontCPU, upCPU float64) hopPoint {
	return hopPoint{Front: front, Rep: rep, Conc: conc, FrontCPUus: frontCPU, UpstreamCPUus: upCPU,
		Result: loadgen.Result{RPS: rps, P50us: p50, P99us: p99}}
}

// TestHopSummarize: a front's point is paired with the direct point of the
// same rep and level: the added latency is a difference, the CPU ratio is
// the front's over the upstream's in the same window, and over the
// upstream's at the direct point.
func TestHopSummarize(t *testing.T) {
	t.Parallel()
	points := []hopPoint{
		hp(direct, 1, 1, 10000, 80, 150, 0, 60), hp("gateway", 1, 1, 4000, 180, 400, 120, 80),
		hp(direct, 2, 1, 5000, 160, 300, 0, 100), hp("gateway", 2, 1, 2000, 300, 700, 200, 100),
		hp("gateway", 3, 1, 1, 1, 1, 1, 1), // no direct point in rep 3: not paired
	}
	sums := hopSummarize([]string{direct, "gateway"}, []int{1}, points)
	g, _ := findHop(sums, "gateway", 1)
	for name, tc := range map[string]struct {
		got  *spread
		want spread
	}{
		"added p50": {g.AddedP50, spread{Median: 120, Min: 100, Max: 140}},
		"added p99": {g.AddedP99, spread{Median: 325, Min: 250, Max: 400}},
		"rps":       {g.RPSRatio, spread{Median: 0.4, Min: 0.4, Max: 0.4}},
		"cpu":       {g.CPURatio, spread{Median: 1.75, Min: 1.5, Max: 2}},
		"cpu ÷ dir": {g.CPUvDirect, spread{Median: 2, Min: 2, Max: 2}},
	} {
		if tc.got == nil || !near(*tc.got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", name, tc.got, tc.want)
		}
	}
	if g.Reps != 3 {
		t.Errorf("reps %d, want 3", g.Reps)
	}
	if d, _ := findHop(sums, direct, 1); d.AddedP50 != nil || d.CPURatio != nil {
		t.Errorf("direct paired with itself: %+v", d)
	}
	md := hopMarkdown([]string{direct, "gateway"}, []spec{{Name: "gateway", Desc: "the gateway"}}, []int{1}, sums, map[string]any{"reps": 3})
	if row := "| gateway | 1 | +120 [+100–+140] | +325 [+250–+400] | 0.40x [0.40–0.40] | 1.75x [1.50–2.00] | 2.00x [2.00–2.00] |"; !strings.Contains(md, row) {
		t.Errorf("no row\n%s\nin\n%s", row, md)
	}
	if svg := hopChart([]string{direct, "gateway"}, []int{1}, sums, map[string]any{"reps": 3}); !strings.Contains(svg, "goal: 1.3x") {
		t.Errorf("the chart lacks the CPU goal line")
	}
}

// TestStages: a sample goes to the first stage whose patterns its stack
// meets: a write under the Transport's write loop is the request to the
// upstream, any other write the answer to the client.
func TestStages(t *testing.T) {
	t.Parallel()
	traces := `File: gateway
-----------+-------------------------------------------------------
      30ms   internal/runtime/syscall/linux.Syscall6
             syscall.write
             net/http.(*persistConn).writeLoop
-----------+-------------------------------------------------------
      10ms   internal/runtime/syscall/linux.Syscall6
             syscall.write
             net/http.(*response).finishRequest
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      40ms   github.com/wymcp/wymcp/internal/wire.AppendForwardedResult
             net/http.(*conn).serve
-----------+-------------------------------------------------------
      20ms   runtime.findRunnable
             runtime.schedule
`
	got := map[string]float64{}
	for _, s := range stages(traces) {
		got[s.name] = s.share
	}
	for name, want := range map[string]float64{
		"write(2) of the request to the upstream":                                                 0.3,
		"write(2) of the answer to the client":                                                    0.1,
		"the server half in Go (net/http server; MCP parse, checks, actor, encode; ReverseProxy)": 0.4,
		"scheduler and the rest of the runtime":                                                   0.2,
	} {
		if g := got[name]; g < want-1e-9 || g > want+1e-9 {
			t.Errorf("%s: %.3f, want %.3f", name, g, want)
		}
	}
}
