package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/bench/loadgen"
)

func pt(server string, rep, conc int, rps, p99, cpu float64) point {
	return point{Server: server, Rep: rep, Conc: conc, ServerCPUus: cpu, Result: loadgen.Result{RPS: rps, P99us: p99}}
}

// TestPairWith: each rep's ratio is taken against bare's point of the same
// rep and concurrency, never against another rep's, and a rep bare lacks is
// left out.
func TestPairWith(t *testing.T) {
	points := []point{
		// Rep 1, a fast host: both fast. Rep 2 slow: both slow. Rep 3: bare
		// did not run, so wymcp's point has no pair.
		pt("wymcp", 1, 16, 40000, 1000, 25), pt("bare", 1, 16, 40000, 800, 25),
		pt("wymcp", 2, 16, 18000, 2000, 60), pt("bare", 2, 16, 20000, 2000, 50),
		pt("wymcp", 3, 16, 1, 1, 1),
		pt("wymcp", 1, 64, 30000, 500, 30), pt("bare", 1, 64, 20000, 1000, 40),
	}
	specs := []spec{{Name: "wymcp"}, {Name: "bare"}}
	sums := summarize(specs, []int{16, 64}, points)
	pairWith(sums, points, "bare")

	w16, _ := find(sums, "wymcp", 16)
	want := map[string]spread{
		"rps": {Median: 0.95, Min: 0.9, Max: 1},
		"p99": {Median: 1.125, Min: 1, Max: 1.25},
		"cpu": {Median: 1.1, Min: 1, Max: 1.2},
	}
	for name, got := range map[string]*spread{"rps": w16.RPSPerRep, "p99": w16.P99PerRep, "cpu": w16.CPUPerRep} {
		if got == nil || !near(*got, want[name]) {
			t.Errorf("c=16 %s per rep: got %+v, want %+v", name, got, want[name])
		}
	}
	w64, _ := find(sums, "wymcp", 64)
	if got := w64.RPSPerRep; got == nil || !near(*got, spread{1.5, 1.5, 1.5}) {
		t.Errorf("c=64 rps per rep: got %+v, want 1.5", got)
	}
	if b, _ := find(sums, "bare", 16); b.RPSPerRep != nil || b.P99PerRep != nil || b.CPUPerRep != nil {
		t.Errorf("bare against itself: %+v", b)
	}

	md := markdown(specs, []int{16, 64}, sums, map[string]any{})
	if row := "| wymcp | 0.95x [0.90–1.00] / 1.12x [1.00–1.25] / 1.10x [1.00–1.20] | 1.50x [1.50–1.50] / 0.50x [0.50–0.50] / 0.75x [0.75–0.75] |"; !strings.Contains(md, row) {
		t.Errorf("the rep-by-rep table lacks\n%s\nin\n%s", row, md)
	}
}

// TestPairWithoutBare: with no bare handler measured there is nothing to
// pair, and the table is left out.
func TestPairWithoutBare(t *testing.T) {
	points := []point{pt("wymcp", 1, 16, 40000, 1000, 25)}
	specs := []spec{{Name: "wymcp"}}
	sums := summarize(specs, []int{16}, points)
	pairWith(sums, points, "bare")
	if sums[0].RPSPerRep != nil {
		t.Errorf("paired without bare: %+v", sums[0].RPSPerRep)
	}
	if md := markdown(specs, []int{16}, sums, map[string]any{}); strings.Contains(md, "Rep by rep") {
		t.Errorf("a rep-by-rep table without bare:\n%s", md)
	}
}

func near(a, b spread) bool {
	eq := func(x, y float64) bool { return x-y < 1e-9 && y-x < 1e-9 }
	return eq(a.Median, b.Median) && eq(a.Min, b.Min) && eq(a.Max, b.Max)
}

// TestMachineLine: the report names the host by its caches as well as its
// model, which the project VM kept while its caches changed fourfold.
func TestMachineLine(t *testing.T) {
	t.Parallel()
	specs := []spec{{Name: "wymcp"}}
	sums := summarize(specs, []int{16}, []point{pt("wymcp", 1, 16, 40000, 1000, 25)})
	md := markdown(specs, []int{16}, sums, map[string]any{"cpu_model": "AMD EPYC", "caches": "L2 1024 KiB, L3 32 MiB", "cpus": 2})
	if want := "AMD EPYC (L2 1024 KiB, L3 32 MiB), 2 CPUs"; !strings.Contains(md, want) {
		t.Errorf("no %q in\n%s", want, md)
	}
	md = markdown(specs, []int{16}, sums, map[string]any{"cpu_model": "AMD EPYC", "cpus": 2})
	if want := "AMD EPYC, 2 CPUs"; !strings.Contains(md, want) {
		t.Errorf("without caches: no %q in\n%s", want, md)
	}
}

// TestTurnOrder: interleaved servers take their points in the given order
// in odd reps and reversed in even ones, so each goes first as often.
func TestTurnOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, rep int
		want   []int
	}{
		{2, 1, []int{0, 1}},
		{2, 2, []int{1, 0}},
		{3, 3, []int{0, 1, 2}},
		{3, 4, []int{2, 1, 0}},
		{1, 2, []int{0}},
	} {
		if got := turnOrder(tc.n, tc.rep); !slices.Equal(got, tc.want) {
			t.Errorf("turnOrder(%d, %d) = %v, want %v", tc.n, tc.rep, got, tc.want)
		}
	}
}

// TestOrderLine: the report's title says how the servers were run.
func TestOrderLine(t *testing.T) {
	t.Parallel()
	specs := []spec{{Name: "wymcp"}}
	sums := summarize(specs, []int{16}, []point{pt("wymcp", 1, 16, 40000, 1000, 25)})
	for _, tc := range []struct {
		interleaved bool
		want        string
	}{
		{false, "per point; each server's points in a row, servers in alternation)"},
		{true, "per point; every server up at once, the points taken in turn)"},
	} {
		md := markdown(specs, []int{16}, sums, map[string]any{"reps": 3, "interleaved": tc.interleaved})
		if !strings.Contains(md, tc.want) {
			t.Errorf("interleaved=%v: no %q in\n%s", tc.interleaved, tc.want, md)
		}
	}
}
