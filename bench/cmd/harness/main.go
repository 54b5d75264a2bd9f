// Command harness builds the bench servers and measures them side by side:
// each server pinned to one core, the load generator to another, servers in
// alternation (A B C … A B C …) for -reps repetitions, medians reported.
// It prints a Markdown table on stdout and writes results.json and
// throughput.svg and latency.svg under -out. See bench/README.md.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wymcp/wymcp/bench/inproc"
	"github.com/wymcp/wymcp/bench/loadgen"
)

const clockTicks = 100 // USER_HZ on Linux

type options struct {
	servers   []string
	levels    []int
	warmup    time.Duration
	dur       time.Duration
	prewarm   time.Duration
	reps      int
	out       string
	basePort  int
	noTaskset bool
	pprof     time.Duration
	pprofC    int
	// interleave runs every server at once and takes each point in turn
	// (measureInterleaved), instead of one server's every point at a time.
	interleave bool
	// quiet and quietWait: with -hop, wait before each point until other
	// work uses less than quiet percent of a core, for at most quietWait.
	quiet     float64
	quietWait time.Duration
}

// point is one measured (server, concurrency, repetition).
type point struct {
	Server       string  `json:"server"`
	Rep          int     `json:"rep"`
	Conc         int     `json:"conc"`
	ServerCPUus  float64 `json:"server_cpu_us_per_req"`
	ServerCPUPct float64 `json:"server_cpu_pct"`
	OtherCPUPct  float64 `json:"other_cpu_pct"`
	RSSKiB       int64   `json:"server_vmhwm_kib"`
	loadgen.Result
}

// summary is the medians of one (server, concurrency) over the reps.
type summary struct {
	Server      string  `json:"server"`
	Conc        int     `json:"conc"`
	Revision    string  `json:"revision"`
	RPS         float64 `json:"rps"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	P999us      float64 `json:"p999_us"`
	ServerCPUus float64 `json:"server_cpu_us_per_req"`
	LoaderCPU   float64 `json:"loader_cpu_pct"`
	OtherCPU    float64 `json:"other_cpu_pct"`
	RSSMiB      float64 `json:"peak_rss_mib"`
	Requests    uint64  `json:"requests"`
	Errors      uint64  `json:"errors"`
	Reps        int     `json:"reps"`
	// Rep by rep against the bare handler (pairWith): nil for bare itself,
	// or when bare was not measured.
	RPSPerRep *spread `json:"rps_ratio_per_rep,omitempty"`
	P99PerRep *spread `json:"p99_ratio_per_rep,omitempty"`
	CPUPerRep *spread `json:"server_cpu_ratio_per_rep,omitempty"`
}

// spread is the median and the range of a server's ratios to a reference
// server, one ratio per rep.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func main() {
	var o options
	// wymcp and the bare ceiling run back to back: their ratio is the
	// target, and drift on a shared machine between two adjacent servers
	// is the smallest.
	servers := flag.String("servers", "wymcp,bare,gosdk,mcpgo,ts", "servers to measure, in alternation order")
	levels := flag.String("c", "1,16,64,256", "concurrency levels (connections)")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "warm-up before each measured point")
	flag.DurationVar(&o.dur, "d", 10*time.Second, "measured duration of each point")
	flag.DurationVar(&o.prewarm, "prewarm", 3*time.Second, "load at c=16 after each server start, before its points (JIT, heap growth)")
	flag.IntVar(&o.reps, "reps", 3, "repetitions of the whole matrix, in alternation (with -hop, 0 takes the -pprof profiles alone)")
	quick := flag.Bool("quick", false, "smoke mode: 1 rep, 1s warm-up, 1s measured, 1s pre-warm")
	flag.StringVar(&o.out, "out", "results", "output directory (relative to bench/)")
	flag.IntVar(&o.basePort, "port", 38180, "preferred first port; server i listens on port+i, or on a free port when that one is taken")
	flag.BoolVar(&o.noTaskset, "no-taskset", false, "do not pin server and loader to cores")
	flag.DurationVar(&o.pprof, "pprof", 0, "after the matrix, take a CPU profile of wymcp this long (e.g. 10s)")
	flag.IntVar(&o.pprofC, "pprof-c", 16, "concurrency while profiling")
	hop := flag.Bool("hop", false, "measure the hop: one upstream (servers/wymcp) direct and through each of -fronts, interleaved; writes hop.md, hop.json, hop.svg (-c defaults to 1,16,64)")
	fronts := flag.String("fronts", "gateway,gosdk-forward,revproxy", "with -hop: the servers in front of the upstream, in turn order (also: gateway-lean)")
	flag.Float64Var(&o.quiet, "quiet", 0, "with -hop: before each point, wait until other work uses less than this percent of one core (0: do not wait)")
	flag.DurationVar(&o.quietWait, "quiet-wait", 30*time.Second, "with -quiet: the longest wait before a point")
	pprofFronts := flag.String("pprof-fronts", "gateway", "with -hop and -pprof: the fronts to profile, each at -pprof-c")
	flag.BoolVar(&o.interleave, "interleave", false, "start every server at once each rep and take each point in turn, the order reversed every other rep: a pair's two points run seconds apart instead of minutes")
	flag.Parse()
	if *quick {
		o.reps, o.warmup, o.dur, o.prewarm = 1, time.Second, time.Second, time.Second
	}
	o.servers = strings.Split(*servers, ",")
	if *hop {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "c" })
		if !set {
			*levels = "1,16,64"
		}
		o.interleave = true
	}
	for _, f := range strings.Split(*levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad -c level %q", f))
		}
		o.levels = append(o.levels, n)
	}

	serverCPU := pinSelf(o.noTaskset)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "\n%v: stopping servers\n", s)
		killAll()
		os.Exit(130)
	}()
	defer killAll()

	root, err := benchRoot()
	if err != nil {
		fatal(err)
	}
	if *hop {
		outDir := o.out
		if !filepath.IsAbs(outDir) {
			outDir = filepath.Join(root, outDir)
		}
		must(os.MkdirAll(outDir, 0o755))
		binDir, err := os.MkdirTemp("", "wymcp-bench-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(binDir)
		var pf []string
		if *pprofFronts != "" {
			pf = strings.Split(*pprofFronts, ",")
		}
		runHop(o, root, outDir, binDir, serverCPU, strings.Split(*fronts, ","), pf)
		return
	}
	var specs []spec
	for _, name := range o.servers {
		i := slices.IndexFunc(allSpecs, func(s spec) bool { return s.Name == name })
		if i < 0 {
			fatal(fmt.Errorf("unknown server %q", name))
		}
		specs = append(specs, allSpecs[i])
	}
	outDir := o.out
	if !filepath.IsAbs(outDir) {
		outDir = filepath.Join(root, outDir)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fatal(err)
	}
	binDir, err := os.MkdirTemp("", "wymcp-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(binDir)
	if err := setupAuth(specs, binDir); err != nil {
		fatal(err)
	}
	progress("building %d servers…", len(specs))
	bins, err := build(root, binDir, specs)
	if err != nil {
		fatal(err)
	}

	total := o.reps * len(specs) * len(o.levels)
	perServer := o.prewarm + time.Duration(len(o.levels))*(o.warmup+o.dur) + time.Second
	eta := time.Duration(o.reps*len(specs)) * perServer
	progress("running %d points, about %v (taskset: %v)", total, eta.Round(time.Second), serverCPU != "")
	t0 := time.Now()
	var points []point
	done := 0
	tick := func(rep int, name string, c int, last float64) {
		done++
		el := time.Since(t0)
		left := time.Duration(float64(el) / float64(done) * float64(total-done))
		progress("[%3d/%d] rep %d/%d %-6s c=%-4d %9.0f req/s | %v elapsed, ~%v left",
			done, total, rep, o.reps, name, c, last, el.Round(time.Second), left.Round(time.Second))
	}
	for rep := 1; rep <= o.reps; rep++ {
		pts, err := measureRep(o, specs, bins, serverCPU, rep, tick)
		if err != nil {
			killAll()
			fatal(err)
		}
		points = append(points, pts...)
	}
	fmt.Fprintln(os.Stderr)

	sums := summarize(specs, o.levels, points)
	pairWith(sums, points, "bare")
	meta := metadata(o, serverCPU)
	var prof *profileReport
	if o.pprof > 0 {
		prof, err = profileWymcp(o, bins["wymcp"], outDir, serverCPU)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pprof: %v\n", err)
		}
	}
	md := markdown(specs, o.levels, sums, meta)
	fmt.Print(md)
	if prof != nil {
		fmt.Printf("\nCPU profile of wymcp at c=%d: %s (top by cum and flat: %s)\n", o.pprofC, prof.File, prof.Top)
	}
	js, _ := json.MarshalIndent(map[string]any{"meta": meta, "summary": sums, "points": points, "profile": prof}, "", "  ")
	must(os.WriteFile(filepath.Join(outDir, "results.json"), js, 0o644))
	must(os.WriteFile(filepath.Join(outDir, "results.md"), []byte(md), 0o644))
	must(os.WriteFile(filepath.Join(outDir, "throughput.svg"), []byte(chart(specs, o.levels, sums, meta)), 0o644))
	must(os.WriteFile(filepath.Join(outDir, "latency.svg"), []byte(latencyChart(specs, o.levels, sums, meta)), 0o644))
	fmt.Fprintf(os.Stderr, "wrote %s/{results.json,results.md,throughput.svg,latency.svg}\n", outDir)
	var bad uint64
	for _, s := range sums {
		bad += s.Errors
	}
	if bad > 0 {
		killAll()
		fmt.Fprintf(os.Stderr, "FAIL: %d bad responses (see results.json sample_body)\n", bad)
		os.Exit(1)
	}
}

// tickFunc is told of each point as it is measured, for the progress line.
type tickFunc func(rep int, name string, c int, rps float64)

// measureRep measures every server at every level once, in the order
// -interleave picks: one server's whole matrix after another's, or every
// server up at once and each level's points in turn (measureInterleaved).
func measureRep(o options, specs []spec, bins map[string]string, serverCPU string, rep int, tick tickFunc) ([]point, error) {
	if o.interleave {
		return measureInterleaved(o, specs, bins, serverCPU, rep, tick)
	}
	var pts []point
	for si, s := range specs {
		sp, err := measureServer(o, s, bins[s.Name], freePort(o.basePort+si), serverCPU, rep, tick)
		if err != nil {
			return nil, err
		}
		pts = append(pts, sp...)
	}
	return pts, nil
}

// measureServer starts s, pre-warms it and measures every level.
func measureServer(o options, s spec, bin string, port int, serverCPU string, rep int, tick tickFunc) ([]point, error) {
	p, err := startWarm(o, s, bin, port, serverCPU)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	var pts []point
	for _, c := range o.levels {
		pt, err := measurePoint(o, s, p, c, rep)
		if err != nil {
			return nil, err
		}
		pts = append(pts, pt)
		tick(rep, s.Name, c, pt.RPS)
	}
	return pts, nil
}

// measureInterleaved measures one rep with every server up at once, each
// pinned to the server core and idle but for its own points: at each level
// the servers take their point in turn (turnOrder). A point and the bare
// handler's in the same rep then run one -warmup plus -d apart, not the
// minutes a whole server's matrix takes, so the pair's ratio (pairWith)
// sees the same host: on the project machine the bare handler's
// throughput has moved by a third between two reps.
func measureInterleaved(o options, specs []spec, bins map[string]string, serverCPU string, rep int, tick tickFunc) ([]point, error) {
	procs := make([]*proc, len(specs))
	defer func() {
		for _, p := range procs {
			if p != nil {
				p.stop()
			}
		}
	}()
	for i, s := range specs {
		p, err := startWarm(o, s, bins[s.Name], freePort(o.basePort+i), serverCPU)
		if err != nil {
			return nil, err
		}
		procs[i] = p
	}
	var pts []point
	for _, c := range o.levels {
		for _, i := range turnOrder(len(specs), rep) {
			pt, err := measurePoint(o, specs[i], procs[i], c, rep)
			if err != nil {
				return nil, err
			}
			pts = append(pts, pt)
			tick(rep, specs[i].Name, c, pt.RPS)
		}
	}
	return pts, nil
}

// turnOrder is the order in which n interleaved servers take a point in
// rep: as given in odd reps, reversed in even ones (A B, then B A), so
// that each goes first as often as the other over two reps and a host
// that drifts steadily during a pair does not favour one side.
func turnOrder(n, rep int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if rep%2 == 0 {
			order[i] = n - 1 - i
		}
	}
	return order
}

// startWarm starts s and pre-warms it at 16 connections.
func startWarm(o options, s spec, bin string, port int, serverCPU string) (*proc, error) {
	p, err := start(s, bin, port, serverCPU)
	if err != nil {
		return nil, err
	}
	if o.prewarm > 0 {
		if _, err := loadgen.Run(loadgen.Config{Addr: p.addr, Request: s.request(p.addr), Expect: loadgen.EchoExpect, Conns: 16, Duration: o.prewarm}); err != nil {
			p.stop()
			return nil, fmt.Errorf("%s pre-warm: %w", s.Name, err)
		}
	}
	return p, nil
}

// measurePoint measures s, already started as p, at c connections: the
// loader's result and the server's CPU over the measured window.
func measurePoint(o options, s spec, p *proc, c, rep int) (point, error) {
	var cpu0, cpu1, box0, box1 uint64
	res, err := loadgen.Run(loadgen.Config{
		Addr: p.addr, Request: s.request(p.addr), Expect: loadgen.EchoExpect, Conns: c,
		Warmup: o.warmup, Duration: o.dur,
		OnMeasure: func(startW bool) {
			if startW {
				cpu0, _ = p.cpu()
				box0, _ = boxTicks()
			} else {
				cpu1, _ = p.cpu()
				box1, _ = boxTicks()
			}
		},
	})
	if err != nil {
		return point{}, fmt.Errorf("%s c=%d: %w", s.Name, c, err)
	}
	select {
	case <-p.done:
		return point{}, fmt.Errorf("%s died during c=%d: %v\n%s", s.Name, c, p.err, p.log)
	default:
	}
	srvSec := float64(cpu1-cpu0) / clockTicks
	boxSec := float64(box1-box0) / clockTicks
	pt := point{Server: s.Name, Rep: rep, Conc: c, Result: res, RSSKiB: p.hwm()}
	pt.ServerCPUPct = 100 * srvSec / res.Seconds
	if res.Requests > 0 {
		pt.ServerCPUus = srvSec * 1e6 / float64(res.Requests)
	}
	pt.OtherCPUPct = max(0, 100*boxSec/res.Seconds-pt.ServerCPUPct-res.LoaderCPUPct)
	return pt, nil
}

func summarize(specs []spec, levels []int, points []point) []summary {
	var out []summary
	for _, s := range specs {
		for _, c := range levels {
			var rps, p50, p99, p999, cpu, ld, oth []float64
			sm := summary{Server: s.Name, Conc: c, Revision: "?"}
			for _, p := range points {
				if p.Server != s.Name || p.Conc != c {
					continue
				}
				rps = append(rps, p.RPS)
				p50 = append(p50, p.P50us)
				p99 = append(p99, p.P99us)
				p999 = append(p999, p.P999us)
				cpu = append(cpu, p.ServerCPUus)
				ld = append(ld, p.LoaderCPUPct)
				oth = append(oth, p.OtherCPUPct)
				sm.RSSMiB = max(sm.RSSMiB, float64(p.RSSKiB)/1024)
				sm.Requests += p.Requests
				sm.Errors += p.Errors()
				sm.Reps++
				sm.Revision = revision(s, p.Sample)
			}
			sm.RPS, sm.P50us, sm.P99us, sm.P999us = median(rps), median(p50), median(p99), median(p999)
			sm.ServerCPUus, sm.LoaderCPU, sm.OtherCPU = median(cpu), median(ld), median(oth)
			out = append(out, sm)
		}
	}
	return out
}

// revision reads which protocol revision the answer shows: the 2026-07-28
// results carry resultType and the serverInfo _meta.
func revision(s spec, body string) string {
	switch {
	case s.Name == "bare":
		return "n/a (canned, shape M body)"
	case strings.Contains(body, `"resultType"`) && strings.Contains(body, "io.modelcontextprotocol/serverInfo"):
		return "2026-07-28"
	case strings.Contains(body, `"result"`):
		return "2025-era (no resultType)"
	}
	return "?"
}

// pairWith gives each summary but ref's its ratios to ref's point of the
// same rep and concurrency. The servers alternate within a rep, so the two
// points of a pair ran at most a few minutes apart, and a host that drifts
// between reps (on the project machine the bare handler's throughput has
// doubled from one rep to the next) moves both: the median of the pairs is
// steadier than the ratio of the two medians, and the range shows how far
// one rep can be trusted.
func pairWith(sums []summary, points []point, ref string) {
	type key struct{ rep, conc int }
	base := map[key]point{}
	for _, p := range points {
		if p.Server == ref {
			base[key{p.Rep, p.Conc}] = p
		}
	}
	for i := range sums {
		s := &sums[i]
		if s.Server == ref {
			continue
		}
		var rps, p99, cpu []float64
		for _, p := range points {
			r, ok := base[key{p.Rep, p.Conc}]
			if p.Server != s.Server || p.Conc != s.Conc || !ok || r.RPS == 0 || r.P99us == 0 || r.ServerCPUus == 0 {
				continue
			}
			rps = append(rps, p.RPS/r.RPS)
			p99 = append(p99, p.P99us/r.P99us)
			cpu = append(cpu, p.ServerCPUus/r.ServerCPUus)
		}
		s.RPSPerRep, s.P99PerRep, s.CPUPerRep = spreadOf(rps), spreadOf(p99), spreadOf(cpu)
	}
}

// spreadOf is the spread of v, nil when v is empty.
func spreadOf(v []float64) *spread {
	if len(v) == 0 {
		return nil
	}
	return &spread{Median: median(v), Min: slices.Min(v), Max: slices.Max(v)}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pinSelf re-executes the harness under `taskset -c 1` (the loader's core)
// and returns the server's core, or "" when pinning is off or unavailable.
func pinSelf(off bool) string {
	if os.Getenv("WYMCP_BENCH_PINNED") == "1" {
		return "0" // already re-executed; NumCPU now reports the one core
	}
	if off || runtime.NumCPU() < 2 {
		return ""
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		fmt.Fprintln(os.Stderr, "taskset not found: running unpinned")
		return ""
	}
	if err := exec.Command("taskset", "-c", "0", "true").Run(); err != nil {
		fmt.Fprintln(os.Stderr, "taskset unusable: running unpinned")
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	tk, _ := exec.LookPath("taskset")
	env := append(os.Environ(), "WYMCP_BENCH_PINNED=1")
	args := append([]string{"taskset", "-c", "1", exe}, os.Args[1:]...)
	err = syscall.Exec(tk, args, env)
	fmt.Fprintf(os.Stderr, "re-exec under taskset: %v; running unpinned\n", err)
	return ""
}

func benchRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/wymcp/wymcp/bench\n") {
			return dir, nil
		}
		if b, err := os.ReadFile(filepath.Join(dir, "bench", "go.mod")); err == nil && strings.Contains(string(b), "module github.com/wymcp/wymcp/bench\n") {
			return filepath.Join(dir, "bench"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run from the repository or bench/: no bench/go.mod found")
		}
		dir = parent
	}
}

func metadata(o options, serverCPU string) map[string]any {
	m := map[string]any{
		"date":          time.Now().UTC().Format(time.RFC3339),
		"go":            runtime.Version(),
		"cpus":          cpuCount(),
		"cpu_model":     cpuModel(),
		"caches":        caches(),
		"server_core":   serverCPU,
		"loader_core":   map[bool]string{true: "1", false: ""}[serverCPU != ""],
		"levels":        o.levels,
		"warmup":        o.warmup.String(),
		"duration":      o.dur.String(),
		"prewarm":       o.prewarm.String(),
		"reps":          o.reps,
		"request_shape": "M (2026-07-28 headers + params._meta), tools/call echo {text:hello}",
		"go_servers":    "GOMAXPROCS=1",
		"interleaved":   o.interleave,
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m["node"] = strings.TrimSpace(string(out))
	}
	return m
}

func cpuCount() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "\nprocessor\t") + map[bool]int{true: 1}[strings.HasPrefix(string(b), "processor\t")]
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// caches names the core's L2 and L3 sizes, "" when sysfs does not give
// them. The model name alone does not tell hosts apart: the project VM has
// reported "AMD EPYC" on hosts whose caches differed fourfold, and the
// bare handler's throughput with them.
func caches() string {
	l2, l3 := inproc.CacheSize(2), inproc.CacheSize(3)
	if l2 == 0 || l3 == 0 {
		return ""
	}
	return fmt.Sprintf("L2 %d KiB, L3 %d MiB", l2>>10, l3>>20)
}

type profileReport struct {
	File string  `json:"file"`
	Top  string  `json:"top"`
	RPS  float64 `json:"rps_while_profiling"`
}

// profileWymcp runs wymcp with net/http/pprof on a side port, loads it at
// o.pprofC and saves a CPU profile plus `go tool pprof -top` by cum and flat.
func profileWymcp(o options, bin, outDir, serverCPU string) (*profileReport, error) {
	if bin == "" {
		return nil, fmt.Errorf("wymcp is not among -servers")
	}
	s := allSpecs[0]
	side := fmt.Sprintf("127.0.0.1:%d", freePort(o.basePort+100))
	p, err := start(s, bin, freePort(o.basePort+50), serverCPU, "PPROF_ADDR="+side)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	progress("profiling wymcp at c=%d for %v…", o.pprofC, o.pprof)
	r, data, err := profileUnderLoad(side, o.pprof, loadgen.Config{Addr: p.addr, Request: loadgen.EchoRequest(s.Shape, p.addr, "/mcp"),
		Expect: loadgen.EchoExpect, Conns: o.pprofC, Warmup: 2 * time.Second, Duration: o.pprof + time.Second})
	if err != nil {
		return nil, err
	}
	file := filepath.Join(outDir, fmt.Sprintf("wymcp-c%d.cpu.pprof", o.pprofC))
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return nil, err
	}
	var top strings.Builder
	fmt.Fprintf(&top, "wymcp CPU profile, c=%d, %v, %.0f req/s while profiling, %d errors\n\n", o.pprofC, o.pprof, r.RPS, r.Errors())
	if err := pprofTop(&top, bin, file, 25, "-cum", ""); err != nil {
		return nil, err
	}
	topFile := filepath.Join(outDir, fmt.Sprintf("wymcp-c%d.top.txt", o.pprofC))
	if err := os.WriteFile(topFile, []byte(top.String()), 0o644); err != nil {
		return nil, err
	}
	return &profileReport{File: file, Top: topFile, RPS: r.RPS}, nil
}

// profileUnderLoad runs the load cfg and, once its warm-up is over, takes
// a CPU profile of d from the net/http/pprof at side; it returns the
// load's result and the profile.
func profileUnderLoad(side string, d time.Duration, cfg loadgen.Config) (loadgen.Result, []byte, error) {
	type lr struct {
		r   loadgen.Result
		err error
	}
	ch := make(chan lr, 1)
	go func() {
		r, err := loadgen.Run(cfg)
		ch <- lr{r, err}
	}()
	time.Sleep(cfg.Warmup + 300*time.Millisecond)
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", side, int(d.Seconds())))
	if err != nil {
		return loadgen.Result{}, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return loadgen.Result{}, nil, err
	}
	res := <-ch
	if res.err != nil {
		return loadgen.Result{}, nil, res.err
	}
	return res.r, data, nil
}

// pprofTop appends `go tool pprof -top` of the profile file of bin to
// top, once per mode ("" for by flat, "-cum" for by cum), each under the
// command that made it.
func pprofTop(top *strings.Builder, bin, file string, nodes int, modes ...string) error {
	for _, mode := range modes {
		args := []string{"tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", nodes)}
		if mode != "" {
			args = append(args, mode)
		}
		args = append(args, bin, file)
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go tool pprof: %v\n%s", err, out)
		}
		fmt.Fprintf(top, "$ go %s\n%s\n", strings.Join(args, " "), out)
	}
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
}

func fatal(err error) {
	killAll()
	fmt.Fprintf(os.Stderr, "\nharness: %v\n", err)
	os.Exit(2)
}

func must(err error) {
	if err != nil {
		fatal(err)
	}
}
