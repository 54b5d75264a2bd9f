// Command tail measures where a server's latency tail comes from: it drives
// each given server binary at one concurrency, as the harness does (server
// pinned to core 0 with GOMAXPROCS=1, this loader on core 1), and reads the
// server's runtime metrics before and after the measured window: how often
// the garbage collector ran and what it scanned, its share of the CPU and of
// mark assists, its stop-the-world pauses, and how long goroutines waited to
// run. It can also take an execution trace of each server under the load
// (-trace DIR), for `go tool trace`.
//
//	cd bench && go build -o /tmp/wymcp ./servers/wymcp && go build -o /tmp/bare ./servers/bare
//	taskset -c 1 go run ./cmd/tail -bin wymcp=/tmp/wymcp,bare=/tmp/bare -c 16 -reps 3 -trace /tmp/traces
//
// The servers must be bench/servers binaries: they serve the runtime
// metrics on RTMETRICS_ADDR (bench/serve).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wymcp/wymcp/bench/loadgen"
	"github.com/wymcp/wymcp/bench/serve"
)

func main() {
	bins := flag.String("bin", "", "servers to measure, name=path,... (bench/servers binaries), in alternation order")
	conns := flag.Int("c", 16, "connections")
	dur := flag.Duration("d", 8*time.Second, "measured window")
	warm := flag.Duration("warmup", 2*time.Second, "warm-up before the window")
	reps := flag.Int("reps", 3, "repetitions, in alternation")
	traceDir := flag.String("trace", "", "if set, a directory for one execution trace per server (1 s, first repetition)")
	flag.Parse()
	var servers [][2]string
	for _, kv := range strings.Split(*bins, ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			log.Fatalf("-bin %q: want name=path", kv)
		}
		servers = append(servers, [2]string{name, path})
	}
	results := map[string][]point{}
	for rep := range *reps {
		for _, s := range servers {
			tracePath := ""
			if *traceDir != "" && rep == 0 {
				_ = os.MkdirAll(*traceDir, 0o755)
				tracePath = filepath.Join(*traceDir, s[0]+".trace")
			}
			p, err := measure(s[1], *conns, *warm, *dur, tracePath)
			if err != nil {
				log.Fatalf("%s: %v", s[0], err)
			}
			fmt.Fprintf(os.Stderr, "rep %d %-14s %8.0f req/s p99 %6.2f ms  gc/1k req %.2f  gc cpu %4.1f%%\n",
				rep+1, s[0], p.rps, p.p99ms, p.gcPer1k, p.gcCPU)
			results[s[0]] = append(results[s[0]], p)
		}
	}
	fmt.Printf("c=%d, %s measured after %s warm-up, medians of %d reps; server on core 0 (GOMAXPROCS=1), loader on core 1.\n\n", *conns, *dur, *warm, *reps)
	fmt.Println("| server | req/s | p50 / p99 / p99.9 ms | GC cycles per 1k req | GC CPU % (assist %) | GC STW pause p99 / max µs | scheduling latency p50 / p99 / p99.9 µs | live heap KiB | scanned per cycle: globals / heap / stacks KiB |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range servers {
		m := median(results[s[0]])
		fmt.Printf("| %s | %.0f | %.2f / %.2f / %.2f | %.2f | %.1f (%.1f) | %.0f / %.0f | %.0f / %.0f / %.0f | %.0f | %.0f / %.0f / %.0f |\n",
			s[0], m.rps, m.p50ms, m.p99ms, m.p999ms, m.gcPer1k, m.gcCPU, m.assistCPU, m.pause99us, m.pauseMaxUs,
			m.sched50us, m.sched99us, m.sched999us, m.liveKiB, m.globalsKiB, m.heapScanKiB, m.stackKiB)
	}
}

// point is one server's measurement at one repetition.
type point struct {
	rps, p50ms, p99ms, p999ms                  float64
	gcPer1k, gcCPU, assistCPU                  float64
	pause99us, pauseMaxUs                      float64
	sched50us, sched99us, sched999us           float64
	liveKiB, globalsKiB, heapScanKiB, stackKiB float64
}

func measure(bin string, conns int, warm, dur time.Duration, tracePath string) (point, error) {
	port, diag := freePort(), freePort()
	cmd := exec.Command("taskset", "-c", "0", bin)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "PORT="+strconv.Itoa(port), "RTMETRICS_ADDR=127.0.0.1:"+strconv.Itoa(diag))
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return point{}, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	diagURL := "http://127.0.0.1:" + strconv.Itoa(diag)
	if err := waitUp(addr, diagURL); err != nil {
		return point{}, err
	}
	var before, after map[string]serve.Sample
	traced := make(chan error, 1)
	cfg := loadgen.Config{
		Addr: addr, Request: loadgen.EchoRequest(loadgen.ShapeM, addr, "/mcp"), Expect: []byte(`"text":"hello"`),
		Conns: conns, Warmup: warm, Duration: dur,
		OnMeasure: func(start bool) {
			if start {
				before = readMetrics(diagURL)
				if tracePath != "" {
					go func() { traced <- fetchTrace(diagURL, tracePath) }()
				}
				return
			}
			after = readMetrics(diagURL)
		},
	}
	res, err := loadgen.Run(cfg)
	if err != nil {
		return point{}, err
	}
	if tracePath != "" {
		if err := <-traced; err != nil {
			return point{}, err
		}
	}
	if res.Errors() != 0 {
		return point{}, fmt.Errorf("%d bad answers: %s", res.Errors(), res.Sample)
	}
	if before == nil || after == nil {
		return point{}, fmt.Errorf("no runtime metrics from %s", diagURL)
	}
	d := func(name string) float64 { return after[name].Value - before[name].Value }
	cycles := d("/gc/cycles/total:gc-cycles")
	cpu := d("/cpu/classes/total:cpu-seconds")
	pauses := histDiff(before["/sched/pauses/total/gc:seconds"], after["/sched/pauses/total/gc:seconds"])
	sched := histDiff(before["/sched/latencies:seconds"], after["/sched/latencies:seconds"])
	perCycle := func(name string) float64 {
		if cycles == 0 {
			return 0
		}
		// The scan metrics are the last cycle's, not a sum.
		return after[name].Value / 1024
	}
	return point{
		rps: res.RPS, p50ms: res.P50us / 1000, p99ms: res.P99us / 1000, p999ms: res.P999us / 1000,
		gcPer1k:   cycles / float64(res.Requests) * 1000,
		gcCPU:     100 * d("/cpu/classes/gc/total:cpu-seconds") / cpu,
		assistCPU: 100 * d("/cpu/classes/gc/mark/assist:cpu-seconds") / cpu,
		pause99us: 1e6 * pauses.quantile(0.99), pauseMaxUs: 1e6 * pauses.quantile(1),
		sched50us: 1e6 * sched.quantile(0.5), sched99us: 1e6 * sched.quantile(0.99), sched999us: 1e6 * sched.quantile(0.999),
		liveKiB:    after["/gc/heap/live:bytes"].Value / 1024,
		globalsKiB: perCycle("/gc/scan/globals:bytes"), heapScanKiB: perCycle("/gc/scan/heap:bytes"), stackKiB: perCycle("/gc/scan/stack:bytes"),
	}, nil
}

// hist is the difference of two readings of a runtime histogram.
type hist struct {
	buckets []float64
	counts  []uint64
}

func histDiff(a, b serve.Sample) hist {
	h := hist{buckets: b.Buckets, counts: make([]uint64, len(b.Counts))}
	for i := range b.Counts {
		h.counts[i] = b.Counts[i]
		if i < len(a.Counts) {
			h.counts[i] -= a.Counts[i]
		}
	}
	return h
}

// quantile returns the upper bound of the bucket that holds quantile q
// (the largest finite bound for an open last bucket); 0 for no samples.
func (h hist) quantile(q float64) float64 {
	var total uint64
	for _, c := range h.counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			hi := h.buckets[i+1]
			if hi >= math.MaxFloat64 { // the open last bucket
				hi = h.buckets[i]
			}
			return hi
		}
	}
	return h.buckets[len(h.buckets)-2]
}

func readMetrics(url string) map[string]serve.Sample {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var m map[string]serve.Sample
	if json.NewDecoder(resp.Body).Decode(&m) != nil {
		return nil
	}
	return m
}

func fetchTrace(url, path string) error {
	resp, err := http.Get(url + "/trace?seconds=1")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func waitUp(addr, diagURL string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			if readMetrics(diagURL) != nil {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("server on %s did not come up", addr)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func median(ps []point) point {
	fields := func(p *point) []*float64 {
		return []*float64{&p.rps, &p.p50ms, &p.p99ms, &p.p999ms, &p.gcPer1k, &p.gcCPU, &p.assistCPU,
			&p.pause99us, &p.pauseMaxUs, &p.sched50us, &p.sched99us, &p.sched999us,
			&p.liveKiB, &p.globalsKiB, &p.heapScanKiB, &p.stackKiB}
	}
	var out point
	outF := fields(&out)
	for i := range outF {
		vals := make([]float64, len(ps))
		for j := range ps {
			vals[j] = *fields(&ps[j])[i]
		}
		sort.Float64s(vals)
		*outF[i] = vals[len(vals)/2]
	}
	return out
}
