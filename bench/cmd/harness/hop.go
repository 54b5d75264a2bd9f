package main

// -hop: what a hop in front of an MCP server costs. One upstream (the
// wymcp echo server) and the servers in front of it (-fronts) are all up
// at once, every one pinned to the server core; at each level the points
// take turns: the upstream direct, then the upstream through each front
// (the order reversed in even reps). Each point samples the CPU of the
// process the loader talks to and of the upstream separately.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wymcp/wymcp/bench/loadgen"
)

// hopUpstream is the upstream every front forwards to, and the "direct"
// point's server.
var hopUpstream = spec{Name: "wymcp", Desc: "wymcp echo (the upstream)", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/wymcp"}

// hopFronts are the servers -hop can put in front of the upstream; each
// reads the upstream's URL from $UPSTREAM_URL.
var hopFronts = []spec{
	{Name: "gateway", Desc: "wymcp + upstream (the gateway)", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/gateway"},
	// The gateway with another client, through upstream.Options.HTTPClient
	// (servers/gateway's $GATEWAY_CLIENT): how far the client path goes.
	{Name: "gateway-lean", Desc: "the gateway with bench/leanhttp (request written and answer read on the calling goroutine) as its client transport", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/gateway", env: []string{"GATEWAY_CLIENT=lean"}},
	{Name: "gosdk-forward", Desc: "go-sdk v1.8.0 client session + server, each call forwarded", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/gosdk-forward"},
	{Name: "revproxy", Desc: "httputil.ReverseProxy, bytes forwarded, nothing parsed", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/revproxy"},
}

// direct names the points of the upstream alone.
const direct = "direct"

// hopPoint is one measured (front, concurrency, repetition); Front is
// "direct" for the upstream alone.
type hopPoint struct {
	Front string `json:"front"`
	Rep   int    `json:"rep"`
	Conc  int    `json:"conc"`
	// FrontCPUus is the front's CPU per call (0 for direct), UpstreamCPUus
	// the upstream's, both from /proc/<pid>/stat over the window.
	FrontCPUus     float64 `json:"front_cpu_us_per_call"`
	UpstreamCPUus  float64 `json:"upstream_cpu_us_per_call"`
	FrontCPUPct    float64 `json:"front_cpu_pct"`
	UpstreamCPUPct float64 `json:"upstream_cpu_pct"`
	OtherCPUPct    float64 `json:"other_cpu_pct"`
	FrontRSSKiB    int64   `json:"front_vmhwm_kib"`
	// WaitedS is how long the point waited for the host to be quiet
	// (-quiet).
	WaitedS float64 `json:"waited_for_quiet_s"`
	loadgen.Result
}

// hopSummary is the medians of one (front, concurrency) over the reps, and
// the hop's cost paired with the direct point of the same rep.
type hopSummary struct {
	Front         string  `json:"front"`
	Conc          int     `json:"conc"`
	RPS           float64 `json:"rps"`
	P50us         float64 `json:"p50_us"`
	P99us         float64 `json:"p99_us"`
	P999us        float64 `json:"p999_us"`
	FrontCPUus    float64 `json:"front_cpu_us_per_call"`
	UpstreamCPUus float64 `json:"upstream_cpu_us_per_call"`
	LoaderCPU     float64 `json:"loader_cpu_pct"`
	OtherCPU      float64 `json:"other_cpu_pct"`
	RSSMiB        float64 `json:"front_peak_rss_mib"`
	Requests      uint64  `json:"requests"`
	Errors        uint64  `json:"errors"`
	Reps          int     `json:"reps"`
	// Rep by rep against direct (nil for direct): the added p50 and p99
	// (µs), throughput ÷ direct's, the front's CPU per call ÷ the
	// upstream's in the same window (the same calls), and ÷ the upstream's
	// when it served the loader directly.
	AddedP50   *spread `json:"added_p50_us,omitempty"`
	AddedP99   *spread `json:"added_p99_us,omitempty"`
	RPSRatio   *spread `json:"rps_ratio,omitempty"`
	CPURatio   *spread `json:"front_cpu_over_upstream_cpu,omitempty"`
	CPUvDirect *spread `json:"front_cpu_over_direct_upstream_cpu,omitempty"`
}

// runHop is the harness's -hop mode: it builds the upstream and the fronts,
// measures, writes hop.md, hop.json and hop.svg under outDir, and profiles
// each of pprofFronts at o.pprofC connections when o.pprof is set.
func runHop(o options, root, outDir, binDir, serverCPU string, fronts, pprofFronts []string) {
	var specs []spec
	for _, name := range fronts {
		i := slices.IndexFunc(hopFronts, func(s spec) bool { return s.Name == name })
		if i < 0 {
			fatal(fmt.Errorf("unknown front %q (have gateway, gateway-lean, gosdk-forward, revproxy)", name))
		}
		specs = append(specs, hopFronts[i])
	}
	progress("building the upstream and %d fronts…", len(specs))
	bins, err := build(root, binDir, append([]spec{hopUpstream}, specs...))
	if err != nil {
		fatal(err)
	}
	if o.reps == 0 {
		// -reps 0: the profiles alone, hop.md and the rest left as they are.
		for _, p := range hopProfiles(o, specs, pprofFronts, bins, outDir, serverCPU) {
			fmt.Printf("CPU profile: %s (top by flat and cum: %s)\n", p.File, p.Top)
		}
		return
	}
	names := append([]string{direct}, fronts...)
	total := o.reps * len(names) * len(o.levels)
	perRep := time.Duration(len(names))*(o.prewarm+time.Duration(len(o.levels))*(o.warmup+o.dur)) + 2*time.Second
	progress("running %d points, about %v (taskset: %v)", total, (time.Duration(o.reps) * perRep).Round(time.Second), serverCPU != "")
	t0 := time.Now()
	done := 0
	tick := func(rep int, name string, c int, rps float64) {
		done++
		el := time.Since(t0)
		left := time.Duration(float64(el) / float64(done) * float64(total-done))
		progress("[%3d/%d] rep %d/%d %-13s c=%-3d %7.0f req/s | %v elapsed, ~%v left",
			done, total, rep, o.reps, name, c, rps, el.Round(time.Second), left.Round(time.Second))
	}
	var points []hopPoint
	for rep := 1; rep <= o.reps; rep++ {
		pts, err := hopRep(o, specs, bins, serverCPU, rep, tick)
		if err != nil {
			killAll()
			fatal(err)
		}
		points = append(points, pts...)
	}
	fmt.Fprintln(os.Stderr)
	sums := hopSummarize(names, o.levels, points)
	meta := metadata(o, serverCPU)
	meta["mode"] = "hop: upstream and every front on the server core (GOMAXPROCS=1 each), loader on the other"
	meta["quiet_pct"], meta["quiet_wait"] = o.quiet, o.quietWait.String()
	profs := hopProfiles(o, specs, pprofFronts, bins, outDir, serverCPU)
	md := hopMarkdown(names, specs, o.levels, sums, meta)
	fmt.Print(md)
	for _, p := range profs {
		fmt.Printf("\nCPU profile: %s (top by flat and cum: %s)\n", p.File, p.Top)
	}
	js, _ := json.MarshalIndent(map[string]any{"meta": meta, "summary": sums, "points": points, "profiles": profs}, "", "  ")
	must(os.WriteFile(filepath.Join(outDir, "hop.json"), js, 0o644))
	must(os.WriteFile(filepath.Join(outDir, "hop.md"), []byte(md), 0o644))
	must(os.WriteFile(filepath.Join(outDir, "hop.svg"), []byte(hopChart(names, o.levels, sums, meta)), 0o644))
	fmt.Fprintf(os.Stderr, "wrote %s/{hop.json,hop.md,hop.svg}\n", outDir)
	var bad uint64
	for _, s := range sums {
		bad += s.Errors
	}
	if bad > 0 {
		killAll()
		fmt.Fprintf(os.Stderr, "FAIL: %d bad responses (see hop.json sample_body)\n", bad)
		os.Exit(1)
	}
}

// hopProfiles profiles each of names (fronts of specs) in turn when
// o.pprof is set.
func hopProfiles(o options, specs []spec, names []string, bins map[string]string, outDir, serverCPU string) []*profileReport {
	var profs []*profileReport
	for _, name := range names {
		if o.pprof <= 0 {
			break
		}
		i := slices.IndexFunc(specs, func(s spec) bool { return s.Name == name })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "pprof: %s is not among -fronts\n", name)
			continue
		}
		prof, err := profileFront(o, specs[i], bins, outDir, serverCPU)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pprof %s: %v\n", name, err)
			continue
		}
		profs = append(profs, prof)
	}
	return profs
}

// startHop starts the upstream, pre-warmed, and then each front pointed at
// it, pre-warmed through it. The caller stops them.
func startHop(o options, fronts []spec, bins map[string]string, serverCPU string, extraEnv func(spec) []string) (*proc, []*proc, error) {
	up, err := startWarm(o, hopUpstream, bins[hopUpstream.Name], freePort(o.basePort+10), serverCPU)
	if err != nil {
		return nil, nil, err
	}
	procs := make([]*proc, len(fronts))
	for i, f := range fronts {
		f.env = append(slices.Clone(f.env), "UPSTREAM_URL=http://"+up.addr+"/mcp")
		if extraEnv != nil {
			f.env = append(f.env, extraEnv(f)...)
		}
		p, err := startWarm(o, f, bins[f.Name], freePort(o.basePort+11+i), serverCPU)
		if err != nil {
			for _, q := range procs[:i] {
				q.stop()
			}
			up.stop()
			return nil, nil, err
		}
		procs[i] = p
	}
	return up, procs, nil
}

// hopRep measures one rep: fresh processes, then at each level the direct
// point and each front's in turn.
func hopRep(o options, fronts []spec, bins map[string]string, serverCPU string, rep int, tick tickFunc) ([]hopPoint, error) {
	up, procs, err := startHop(o, fronts, bins, serverCPU, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, p := range procs {
			p.stop()
		}
		up.stop()
	}()
	var pts []hopPoint
	for _, c := range o.levels {
		for _, i := range turnOrder(len(fronts)+1, rep) {
			name, target := direct, up
			if i > 0 {
				name, target = fronts[i-1].Name, procs[i-1]
			}
			pt, err := measureHop(o, name, target, up, c, rep)
			if err != nil {
				return nil, err
			}
			pts = append(pts, pt)
			tick(rep, name, c, pt.RPS)
		}
	}
	return pts, nil
}

// measureHop loads target (the upstream itself for direct) at c
// connections and samples its CPU and the upstream's over the window.
func measureHop(o options, name string, target, up *proc, c, rep int) (hopPoint, error) {
	waited := waitQuiet(o.quiet, o.quietWait)
	var t0, t1, u0, u1, box0, box1 uint64
	res, err := loadgen.Run(loadgen.Config{
		Addr: target.addr, Request: hopUpstream.request(target.addr), Expect: loadgen.EchoExpect, Conns: c,
		Warmup: o.warmup, Duration: o.dur,
		OnMeasure: func(start bool) {
			if start {
				t0, _ = target.cpu()
				u0, _ = up.cpu()
				box0, _ = boxTicks()
			} else {
				t1, _ = target.cpu()
				u1, _ = up.cpu()
				box1, _ = boxTicks()
			}
		},
	})
	if err != nil {
		return hopPoint{}, fmt.Errorf("%s c=%d: %w", name, c, err)
	}
	for _, p := range []*proc{target, up} {
		select {
		case <-p.done:
			return hopPoint{}, fmt.Errorf("%s: a server died during c=%d: %v\n%s", name, c, p.err, p.log)
		default:
		}
	}
	upSec := float64(u1-u0) / clockTicks
	frontSec := 0.0
	if target != up {
		frontSec = float64(t1-t0) / clockTicks
	}
	boxSec := float64(box1-box0) / clockTicks
	pt := hopPoint{Front: name, Rep: rep, Conc: c, Result: res, WaitedS: waited.Seconds()}
	pt.UpstreamCPUPct = 100 * upSec / res.Seconds
	pt.FrontCPUPct = 100 * frontSec / res.Seconds
	if target != up {
		pt.FrontRSSKiB = target.hwm()
	}
	if res.Requests > 0 {
		pt.UpstreamCPUus = upSec * 1e6 / float64(res.Requests)
		pt.FrontCPUus = frontSec * 1e6 / float64(res.Requests)
	}
	pt.OtherCPUPct = max(0, 100*boxSec/res.Seconds-pt.UpstreamCPUPct-pt.FrontCPUPct-res.LoaderCPUPct)
	return pt, nil
}

// hopSummarize takes the medians per (front, level) and pairs each front's
// point with the direct point of the same rep and level.
func hopSummarize(names []string, levels []int, points []hopPoint) []hopSummary {
	type key struct{ rep, conc int }
	base := map[key]hopPoint{}
	for _, p := range points {
		if p.Front == direct {
			base[key{p.Rep, p.Conc}] = p
		}
	}
	var out []hopSummary
	for _, name := range names {
		for _, c := range levels {
			s := hopSummary{Front: name, Conc: c}
			var rps, p50, p99, p999, fcpu, ucpu, ld, oth []float64
			var a50, a99, rr, cr, cd []float64
			for _, p := range points {
				if p.Front != name || p.Conc != c {
					continue
				}
				rps, p50, p99, p999 = append(rps, p.RPS), append(p50, p.P50us), append(p99, p.P99us), append(p999, p.P999us)
				fcpu, ucpu = append(fcpu, p.FrontCPUus), append(ucpu, p.UpstreamCPUus)
				ld, oth = append(ld, p.LoaderCPUPct), append(oth, p.OtherCPUPct)
				s.RSSMiB = max(s.RSSMiB, float64(p.FrontRSSKiB)/1024)
				s.Requests += p.Requests
				s.Errors += p.Errors()
				s.Reps++
				d, ok := base[key{p.Rep, p.Conc}]
				if name == direct || !ok || d.RPS == 0 {
					continue
				}
				a50, a99 = append(a50, p.P50us-d.P50us), append(a99, p.P99us-d.P99us)
				rr = append(rr, p.RPS/d.RPS)
				if p.UpstreamCPUus > 0 {
					cr = append(cr, p.FrontCPUus/p.UpstreamCPUus)
				}
				if d.UpstreamCPUus > 0 {
					cd = append(cd, p.FrontCPUus/d.UpstreamCPUus)
				}
			}
			s.RPS, s.P50us, s.P99us, s.P999us = median(rps), median(p50), median(p99), median(p999)
			s.FrontCPUus, s.UpstreamCPUus, s.LoaderCPU, s.OtherCPU = median(fcpu), median(ucpu), median(ld), median(oth)
			s.AddedP50, s.AddedP99, s.RPSRatio, s.CPURatio, s.CPUvDirect = spreadOf(a50), spreadOf(a99), spreadOf(rr), spreadOf(cr), spreadOf(cd)
			out = append(out, s)
		}
	}
	return out
}

func findHop(sums []hopSummary, name string, c int) (hopSummary, bool) {
	for _, s := range sums {
		if s.Front == name && s.Conc == c {
			return s, true
		}
	}
	return hopSummary{}, false
}

// us formats a signed µs figure with its range: "+64 [+51–+80]".
func usSpread(s *spread) string {
	return fmt.Sprintf("%+.0f [%+.0f–%+.0f]", s.Median, s.Min, s.Max)
}

// hopMarkdown renders the medians and the hop's cost against direct.
func hopMarkdown(names []string, specs []spec, levels []int, sums []hopSummary, meta map[string]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## The hop: tools/call echo direct and through each front, medians of %v reps (%v warm-up + %v measured per point; every server up at once, the points taken in turn)\n\n", meta["reps"], meta["warmup"], meta["duration"])
	model := fmt.Sprint(meta["cpu_model"])
	if c, _ := meta["caches"].(string); c != "" {
		model += " (" + c + ")"
	}
	fmt.Fprintf(&b, "%s, %v CPUs, %v; the upstream (servers/wymcp) and every front on core %q, loader on core %q; Go servers GOMAXPROCS=1; request shape %v.\n\n",
		model, meta["cpus"], meta["go"], meta["server_core"], meta["loader_core"], meta["request_shape"])
	b.WriteString("| front | what |\n|---|---|\n| direct | the loader to the upstream, no hop |\n")
	for _, sp := range specs {
		fmt.Fprintf(&b, "| %s | %s |\n", sp.Name, sp.Desc)
	}
	b.WriteString("\nEach cell: req/s (p50 / p99 / p99.9 latency, ms); then CPU µs per call of the front / of the upstream.\n\n")
	levelHeader(&b, "front", levels)
	for _, name := range names {
		fmt.Fprintf(&b, "| %s |", name)
		for _, c := range levels {
			s, ok := findHop(sums, name, c)
			if !ok || s.Reps == 0 {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(&b, " %s (%s / %s / %s); CPU %s / %.1f |", comma(s.RPS), ms(s.P50us), ms(s.P99us), ms(s.P999us), frontCPU(s), s.UpstreamCPUus)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe hop, rep by rep against the direct point of the same rep, median [min–max]: added p50 and p99 (µs), throughput ÷ direct, and the front's CPU per call ÷ the upstream's (in the same window, serving the same calls; and ÷ the upstream's at the direct point):\n\n")
	b.WriteString("| front | c | added p50 µs | added p99 µs | req/s ÷ direct | front CPU ÷ upstream CPU | ÷ direct upstream CPU |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, name := range names[1:] {
		for _, c := range levels {
			s, ok := findHop(sums, name, c)
			if !ok || s.AddedP50 == nil {
				continue
			}
			cr, cd := "–", "–"
			if s.CPURatio != nil {
				cr = s.CPURatio.String()
			}
			if s.CPUvDirect != nil {
				cd = s.CPUvDirect.String()
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", name, c, usSpread(s.AddedP50), usSpread(s.AddedP99), s.RPSRatio, cr, cd)
		}
	}
	b.WriteString("\nLoader CPU % of its core (median; near 100 means loader-bound) / other processes' CPU % during the point / errors:\n\n")
	levelHeader(&b, "front", levels)
	for _, name := range names {
		fmt.Fprintf(&b, "| %s |", name)
		for _, c := range levels {
			s, _ := findHop(sums, name, c)
			fmt.Fprintf(&b, " %.0f / %.0f / %d |", s.LoaderCPU, s.OtherCPU, s.Errors)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func frontCPU(s hopSummary) string {
	if s.Front == direct {
		return "–"
	}
	return fmt.Sprintf("%.1f", s.FrontCPUus)
}

// hopChart draws four panels by concurrency: the p50 and p99 the hop adds
// (µs), the front's CPU per call ÷ the upstream's, and throughput with
// direct's, each on a log axis; the goals and Envoy AI Gateway's published
// figure are dotted lines.
func hopChart(names []string, levels []int, sums []hopSummary, meta map[string]any) string {
	const W, H, pw = 1340, 420, 230
	var b strings.Builder
	svgOpen(&b, W, H)
	fmt.Fprintf(&b, `<text x="60" y="22" font-size="14" font-weight="bold">The hop: tools/call echo through each front to one upstream, front and upstream on 1 core — medians of %v reps</text>`+"\n", meta["reps"])
	type pick struct {
		title  string
		v      func(hopSummary) float64
		direct bool
		format func(float64) string
		marks  []mark
	}
	med := func(f func(hopSummary) *spread) func(hopSummary) float64 {
		return func(s hopSummary) float64 {
			if sp := f(s); sp != nil {
				return sp.Median
			}
			return 0
		}
	}
	for k, q := range []pick{
		{"added p50 (µs)", med(func(s hopSummary) *spread { return s.AddedP50 }), false, comma,
			[]mark{{100, "goal at c=1: 100"}, {280, "Envoy AI GW (published): 280"}}},
		{"added p99 (µs)", med(func(s hopSummary) *spread { return s.AddedP99 }), false, comma, nil},
		{"front CPU ÷ upstream CPU per call", med(func(s hopSummary) *spread { return s.CPURatio }), false, ratioLabel,
			[]mark{{1.3, "goal: 1.3x"}}},
		{"throughput (req/s)", func(s hopSummary) float64 { return s.RPS }, true, comma, nil},
	} {
		p := panel{left: 60 + k*(pw+70), top: 60, w: pw, h: H - 60 - 50, levels: levels, format: q.format, marks: q.marks}
		fmt.Fprintf(&b, `<text x="%d" y="48" font-weight="bold">%s</text>`+"\n", p.left, q.title)
		var ss []series
		for _, name := range names {
			if name == direct && !q.direct {
				continue
			}
			s := series{name: name, values: make([]float64, len(levels))}
			for i, c := range levels {
				if sm, ok := findHop(sums, name, c); ok {
					s.values[i] = q.v(sm)
				}
			}
			ss = append(ss, s)
		}
		p.drawSeries(&b, ss)
	}
	legendNames(&b, names, W-135, 70)
	b.WriteString("</svg>\n")
	return b.String()
}

func ratioLabel(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".") + "x"
}

// profileFront starts the upstream and front f with net/http/pprof on a
// side port, loads f at o.pprofC and writes <f>-c<N>.cpu.pprof and
// <f>-c<N>.top.txt (`go tool pprof -top` by flat and by cum).
func profileFront(o options, f spec, bins map[string]string, outDir, serverCPU string) (*profileReport, error) {
	side := fmt.Sprintf("127.0.0.1:%d", freePort(o.basePort+100))
	up, procs, err := startHop(o, []spec{f}, bins, serverCPU, func(spec) []string { return []string{"PPROF_ADDR=" + side} })
	if err != nil {
		return nil, err
	}
	p := procs[0]
	defer func() { p.stop(); up.stop() }()
	progress("profiling %s at c=%d for %v…", f.Name, o.pprofC, o.pprof)
	// Out of other work's way, as the points (-quiet).
	waitQuiet(o.quiet, o.quietWait)
	var c0, c1, u0, u1 uint64
	r, data, err := profileUnderLoad(side, o.pprof, loadgen.Config{Addr: p.addr, Request: f.request(p.addr), Expect: loadgen.EchoExpect,
		Conns: o.pprofC, Warmup: 2 * time.Second, Duration: o.pprof + time.Second,
		OnMeasure: func(start bool) {
			if start {
				c0, _ = p.cpu()
				u0, _ = up.cpu()
			} else {
				c1, _ = p.cpu()
				u1, _ = up.cpu()
			}
		}})
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("%s-c%d", f.Name, o.pprofC)
	file := filepath.Join(outDir, base+".cpu.pprof")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return nil, err
	}
	var top strings.Builder
	n := float64(r.Requests)
	fmt.Fprintf(&top, "%s CPU profile (in front of the wymcp echo upstream, both on core 0), c=%d, %v, %.0f req/s while profiling, %d errors; over the window %.1f µs of the front's CPU and %.1f µs of the upstream's per call (the profiler's own sampling included)\n\n",
		f.Name, o.pprofC, o.pprof, r.RPS, r.Errors(), float64(c1-c0)/clockTicks*1e6/n, float64(u1-u0)/clockTicks*1e6/n)
	if err := pprofTop(&top, bins[f.Name], file, 40, "", "-cum"); err != nil {
		return nil, err
	}
	traces, err := exec.Command("go", "tool", "pprof", "-traces", file).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -traces: %v", err)
	}
	frontUs := float64(c1-c0) / clockTicks * 1e6 / n
	fmt.Fprintf(&top, "By stage (every sample's stack sorted by the first rule it meets, top to bottom; µs per call = share × the front's %.1f µs per call over the window):\n\n", frontUs)
	fmt.Fprintf(&top, "| stage | share of samples | µs per call |\n|---|---:|---:|\n")
	for _, st := range stages(string(traces)) {
		fmt.Fprintf(&top, "| %s | %.1f%% | %.1f |\n", st.name, 100*st.share, st.share*frontUs)
	}
	top.WriteString("\n")
	topFile := filepath.Join(outDir, base+".top.txt")
	if err := os.WriteFile(topFile, []byte(top.String()), 0o644); err != nil {
		return nil, err
	}
	return &profileReport{File: file, Top: topFile, RPS: r.RPS}, nil
}

// waitQuiet waits, at most max, until the machine's busy CPU over half a
// second is below pct percent of one core (every bench server is idle
// between points, so what is busy is other work), and returns how long it
// waited. pct <= 0 does not wait. On a shared host whose neighbours run in
// bursts, it moves a point out of a burst instead of into it; a point that
// still ran beside other work shows it in the "other CPU" column.
func waitQuiet(pct float64, max time.Duration) time.Duration {
	if pct <= 0 {
		return 0
	}
	t0 := time.Now()
	for time.Since(t0) < max {
		b0, all0 := boxTicks()
		time.Sleep(500 * time.Millisecond)
		b1, all1 := boxTicks()
		if all1 <= all0 {
			break
		}
		// all counts every CPU's ticks; 100 * busy / (all / cpus) is the
		// busy share of one core.
		if busy := 100 * float64(b1-b0) / (float64(all1-all0) / float64(max1(cpuCount()))); busy < pct {
			break
		}
	}
	return time.Since(t0)
}

func max1(n int) int { return max(n, 1) }

// stage is one line of a profile's breakdown by stage.
type stage struct {
	name  string
	share float64
}

// stageRules sort a sample of a front's profile into the stage of the hop
// it belongs to: the first rule whose every pattern occurs in the stack
// (a pattern matches a frame it is a substring of) takes it. The order
// matters: a write(2) under the client's frames is the client's.
var stageRules = []struct {
	name string
	all  []string // every one must match some frame
	any  []string // and one of these, when given
}{
	{"write(2) of the request to the upstream", []string{"syscall.write"}, []string{"net/http.(*persistConn).writeLoop", "leanhttp.(*conn).roundTrip"}},
	{"write(2) of the answer to the client", []string{"syscall.write"}, nil},
	{"read(2) of the upstream's answer", []string{"syscall.read"}, []string{"net/http.(*persistConn).readLoop", "leanhttp.(*conn).read"}},
	{"read(2) of the client's request", []string{"syscall.read"}, nil},
	{"other system calls (epoll, futex, sleeps)", nil, []string{"linux.Syscall6", "runtime.futex", "runtime.usleep", "runtime.epollwait", "runtime.netpoll"}},
	{"GC (mark, sweep, assists)", nil, []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.sweepone", "runtime.gcStart"}},
	{"the client in Go (upstream package, net/http Transport, leanhttp)", nil, []string{"wymcp/upstream.", "net/http.(*persistConn)", "net/http.(*Transport)", "leanhttp."}},
	{"the server half in Go (net/http server; MCP parse, checks, actor, encode; ReverseProxy)", nil, []string{"net/http.(*conn).serve"}},
	{"scheduler and the rest of the runtime", nil, nil},
}

// stages reads `go tool pprof -traces` output and returns each rule's
// share of the samples.
func stages(traces string) []stage {
	out := make([]stage, len(stageRules))
	for i, r := range stageRules {
		out[i].name = r.name
	}
	var total float64
	var blocks [][]string
	for _, l := range strings.Split(traces, "\n") {
		switch {
		case strings.HasPrefix(l, "-----------+"):
			blocks = append(blocks, nil)
		case len(blocks) > 0 && strings.TrimSpace(l) != "":
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
		}
	}
	for _, lines := range blocks {
		if len(lines) == 0 {
			continue
		}
		f := strings.Fields(lines[0])
		if len(f) < 2 {
			continue
		}
		v, ok := parseDur(f[0])
		if !ok {
			continue
		}
		frames := []string{strings.Join(f[1:], " ")}
		for _, l := range lines[1:] {
			frames = append(frames, strings.TrimSpace(l))
		}
		has := func(p string) bool {
			return slices.ContainsFunc(frames, func(fr string) bool { return strings.Contains(fr, p) })
		}
		for i, r := range stageRules {
			if !slices.ContainsFunc(r.all, func(p string) bool { return !has(p) }) && (r.any == nil || slices.ContainsFunc(r.any, has)) {
				out[i].share += v
				break
			}
		}
		total += v
	}
	for i := range out {
		if total > 0 {
			out[i].share /= total
		}
	}
	return out
}

// parseDur reads a sample value of `pprof -traces` ("10ms", "1.20s").
func parseDur(s string) (float64, bool) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false
	}
	return d.Seconds(), true
}
