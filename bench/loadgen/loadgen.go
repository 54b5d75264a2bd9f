// Package loadgen is a closed-loop HTTP/1.1 load generator for one POST
// endpoint, written on raw keep-alive TCP connections so that it stays
// cheap: it writes prebuilt request bytes and parses only the status line,
// the headers it needs and a Content-Length or chunked body. Every response
// is checked (2xx, no JSON-RPC "error" member, the expected echoed text) and
// the loader's own CPU is reported, so a loader-bound run is visible.
package loadgen

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config describes one load run.
type Config struct {
	// Addr is host:port of the server (127.0.0.1 only in the harness).
	Addr string
	// Request is the complete request, headers and body, sent as is.
	Request []byte
	// Expect must occur in every good body (e.g. `"text":"hello"`).
	Expect []byte
	// Conns is the number of connections, each with one request in flight.
	Conns int
	// Warmup runs before measuring; Duration is the measured window.
	Warmup, Duration time.Duration
	// OnMeasure, if set, is called just before the measured window opens
	// (start=true) and just after it closes (start=false): the harness
	// samples the server's CPU there.
	OnMeasure func(start bool)
}

// Result is what one run measured. Counts cover the measured window only.
type Result struct {
	Conns      int     `json:"conns"`
	Requests   uint64  `json:"requests"`
	Seconds    float64 `json:"seconds"`
	RPS        float64 `json:"rps"`
	P50us      float64 `json:"p50_us"`
	P90us      float64 `json:"p90_us"`
	P99us      float64 `json:"p99_us"`
	P999us     float64 `json:"p999_us"`
	Non2xx     uint64  `json:"non_2xx"`
	RPCErrors  uint64  `json:"jsonrpc_errors"`
	BadBodies  uint64  `json:"bad_bodies"`
	ConnErrors uint64  `json:"conn_errors"`
	// LoaderCPUPct is the loader's CPU time over the window, as a percentage
	// of one core; near 100 means the loader, not the server, is the limit.
	LoaderCPUPct    float64 `json:"loader_cpu_pct"`
	LoaderCPUPerReq float64 `json:"loader_cpu_us_per_req"`
	// Sample is one response body (the first bad one, if any was bad).
	Sample string `json:"sample_body"`
}

// Errors is the sum of every kind of failure.
func (r Result) Errors() uint64 { return r.Non2xx + r.RPCErrors + r.BadBodies + r.ConnErrors }

const (
	phaseWarm int32 = iota
	phaseMeasure
	phaseStop
)

type worker struct {
	h         hist
	ok        uint64
	non2xx    uint64
	rpcErr    uint64
	badBody   uint64
	connErr   uint64
	sample    []byte
	badSample []byte
	_         [64]byte // keep workers' counters off each other's cache lines
}

var errorMember = []byte(`"error":`)

// Run dials cfg.Conns connections, warms up, measures for cfg.Duration and
// returns the counts and latency quantiles of the measured window.
func Run(cfg Config) (Result, error) {
	if cfg.Conns < 1 {
		cfg.Conns = 1
	}
	conns := make([]net.Conn, cfg.Conns)
	for i := range conns {
		c, err := net.DialTimeout("tcp", cfg.Addr, 5*time.Second)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return Result{}, fmt.Errorf("dial %s: %w", cfg.Addr, err)
		}
		conns[i] = c
	}
	var phase atomic.Int32
	workers := make([]*worker, cfg.Conns)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{}
		workers[i] = w
		wg.Add(1)
		go func(conn net.Conn) {
			defer wg.Done()
			w.loop(cfg, conn, &phase)
		}(conns[i])
	}
	time.Sleep(cfg.Warmup)
	if cfg.OnMeasure != nil {
		cfg.OnMeasure(true)
	}
	ru0 := rusage()
	t0 := time.Now()
	phase.Store(phaseMeasure)
	time.Sleep(cfg.Duration)
	phase.Store(phaseStop)
	elapsed := time.Since(t0)
	ru1 := rusage()
	if cfg.OnMeasure != nil {
		cfg.OnMeasure(false)
	}
	wg.Wait()

	var res Result
	var all hist
	for _, w := range workers {
		all.merge(&w.h)
		res.Requests += w.ok
		res.Non2xx += w.non2xx
		res.RPCErrors += w.rpcErr
		res.BadBodies += w.badBody
		res.ConnErrors += w.connErr
		if res.Sample == "" && w.badSample != nil {
			res.Sample = string(w.badSample)
		}
	}
	if res.Sample == "" {
		for _, w := range workers {
			if w.sample != nil {
				res.Sample = string(w.sample)
				break
			}
		}
	}
	res.Conns = cfg.Conns
	res.Seconds = elapsed.Seconds()
	res.RPS = float64(res.Requests) / res.Seconds
	res.P50us = float64(all.quantile(0.50)) / 1e3
	res.P90us = float64(all.quantile(0.90)) / 1e3
	res.P99us = float64(all.quantile(0.99)) / 1e3
	res.P999us = float64(all.quantile(0.999)) / 1e3
	cpu := (ru1 - ru0).Seconds()
	res.LoaderCPUPct = 100 * cpu / res.Seconds
	if res.Requests > 0 {
		res.LoaderCPUPerReq = cpu * 1e6 / float64(res.Requests)
	}
	return res, nil
}

// loop is one connection's closed loop: send, read the whole answer, check
// it, record it if it started and ended inside the measured window.
func (w *worker) loop(cfg Config, conn net.Conn, phase *atomic.Int32) {
	br := bufio.NewReaderSize(conn, 16<<10)
	var buf []byte
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		p := phase.Load()
		if p == phaseStop {
			return
		}
		if conn == nil {
			c, err := net.DialTimeout("tcp", cfg.Addr, time.Second)
			if err != nil {
				if p == phaseMeasure {
					w.connErr++
				}
				time.Sleep(10 * time.Millisecond)
				continue
			}
			conn = c
			br.Reset(conn)
		}
		start := time.Now()
		_, err := conn.Write(cfg.Request)
		var resp response
		if err == nil {
			resp, buf, err = readResponse(br, buf)
		}
		lat := time.Since(start)
		measured := p == phaseMeasure && phase.Load() == phaseMeasure
		if err != nil {
			if measured {
				w.connErr++
			}
			conn.Close()
			conn = nil
			continue
		}
		if w.sample == nil {
			w.sample = bytes.Clone(resp.body)
		}
		if measured {
			switch {
			case resp.status < 200 || resp.status > 299:
				w.non2xx++
				w.keepBad(resp.body)
			case bytes.Contains(resp.body, errorMember):
				w.rpcErr++
				w.keepBad(resp.body)
			case !bytes.Contains(resp.body, cfg.Expect):
				w.badBody++
				w.keepBad(resp.body)
			default:
				w.ok++
				w.h.record(int64(lat))
			}
		}
		if resp.close {
			conn.Close()
			conn = nil
		}
	}
}

func (w *worker) keepBad(b []byte) {
	if w.badSample == nil {
		w.badSample = bytes.Clone(b)
	}
}

// rusage returns this process's user+system CPU time.
func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Shape names a request shape of notes/peers.md.
type Shape string

const (
	// ShapeM is the 2026-07-28 request: MCP-Protocol-Version, Mcp-Method and
	// Mcp-Name headers and the per-request params._meta envelope.
	ShapeM Shape = "M"
	// ShapeL is the 2025-era stateless POST (no _meta, 2025-11-25 header).
	ShapeL Shape = "L"
)

// Body of each shape, sent without a trailing newline (287 and 100 bytes).
const (
	BodyM = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1.0.0"}}}}`
	BodyL = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
)

// EchoExpect is the text every good echo answer contains.
var EchoExpect = []byte(`"text":"hello"`)

// EchoRequest returns the exact bytes of an echo tools/call in shape s,
// addressed to hostport (e.g. 127.0.0.1:38180) at path. Each of headers is
// one more "Name: value" line, such as the "Authorization: Bearer …" of an
// authenticated server; they are built into the bytes once, like the
// rest, so they cost the loader nothing per request.
func EchoRequest(s Shape, hostport, path string, headers ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", path, hostport)
	for _, h := range headers {
		b.WriteString(h)
		b.WriteString("\r\n")
	}
	body := BodyM
	if s == ShapeM {
		b.WriteString("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
	} else {
		body = BodyL
		b.WriteString("MCP-Protocol-Version: 2025-11-25\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	return b.Bytes()
}
