// Package collector checks, end to end, what a real OpenTelemetry Collector
// receives from the real cmd/wymcp binary (docs/design.md §7).
//
// TestCollector builds the collector with scripts/otelcol/build.sh (cached),
// starts it on loopback ports with OTLP receivers (gRPC and HTTP) and file
// exporters writing OTLP JSON, builds cmd/wymcp, and runs it twice in a row:
// once exporting over http/protobuf and once over gRPC. Each time it sends
// real MCP requests, stops the server with SIGTERM (it flushes on exit) and
// reads what the collector wrote. TestGatewayTrace (gateway_test.go) runs
// two: an upstream and a gateway in front of it (-upstreams), and checks
// that one call is one trace across the hop.
//
// It is opt-in, because the first collector build takes minutes:
//
//	WYMCP_E2E_COLLECTOR=1 go test -timeout 30m ./...   # from e2e/collector
//
// With the variable unset (or 0) the tests skip; set, any problem fails them.
// WYMCP_BIN, when set, names a prebuilt cmd/wymcp binary to use instead of
// building one; WYMCP_CACHE moves the collector's build cache.
//
// This module has no dependencies, not even on wymcp's packages: it only
// runs programs and reads files.
package collector

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// envRun turns the test on.
const envRun = "WYMCP_E2E_COLLECTOR"

// protocolVersion is the MCP revision cmd/wymcp serves.
const protocolVersion = "2026-07-28"

// Bounds on each wait; the test polls and never sleeps blindly past them.
const (
	listenTimeout = 30 * time.Second
	exitTimeout   = 20 * time.Second
	outputTimeout = 30 * time.Second
)

func TestCollector(t *testing.T) {
	if v := os.Getenv(envRun); v == "" || v == "0" {
		t.Skip(envRun + " is not set: skipping the end-to-end check against a real OpenTelemetry Collector " +
			"(set " + envRun + "=1; the first run builds the collector, which takes minutes)")
	}
	began := time.Now()
	root := repoRoot(t)
	dir := t.TempDir()

	phase := time.Now()
	collectorBin := buildCollector(t, root)
	t.Logf("collector binary %s (%.1f s)", collectorBin, time.Since(phase).Seconds())

	phase = time.Now()
	serverBin := buildServer(t, root, dir)
	t.Logf("wymcp binary %s (%.1f s)", serverBin, time.Since(phase).Seconds())

	phase = time.Now()
	col := startCollector(t, collectorBin, dir)
	t.Logf("collector listening: OTLP gRPC %s, HTTP %s (%.1f s)", col.grpcAddr, col.httpAddr, time.Since(phase).Seconds())

	runs := []struct {
		name, service string
		env           []string
	}{
		{"http-protobuf", "wymcp-e2e-http", []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + col.httpAddr,
		}},
		{"grpc", "wymcp-e2e-grpc", []string{
			"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + col.grpcAddr,
			"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			phase := time.Now()
			env := append(r.env,
				"OTEL_SERVICE_NAME="+r.service,
				"OTEL_METRIC_EXPORT_INTERVAL=500",
				"OTEL_BSP_SCHEDULE_DELAY=100",
			)
			sent := exercise(t, serverBin, dir, r.service, env)
			got := waitForOutput(t, col, r.service)
			checkSpans(t, got.spans, sent)
			checkMetrics(t, got.metrics)
			t.Logf("%s: %d spans, %d metrics (%.1f s)", r.name, len(got.spans), len(got.metrics), time.Since(phase).Seconds())
		})
	}
	t.Logf("total %.1f s", time.Since(began).Seconds())
}

// repoRoot is the repository root: two levels above this test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	for _, p := range []string{"scripts/otelcol/build.sh", "cmd/wymcp"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Fatalf("repository root %s: %v", root, err)
		}
	}
	return root
}

// buildCollector runs scripts/otelcol/build.sh, which prints the binary's
// path last, and returns that path. The script's log goes to stderr.
func buildCollector(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "otelcol", "build.sh"))
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/otelcol/build.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	bin := strings.TrimSpace(lines[len(lines)-1])
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("scripts/otelcol/build.sh printed %q, not an executable (%v)", bin, err)
	}
	return bin
}

// buildServer builds cmd/wymcp into dir, or returns WYMCP_BIN when set. The
// build runs in the command's own directory, so it works whether cmd/wymcp
// is a package of the root module or a module of its own.
func buildServer(t *testing.T, root, dir string) string {
	t.Helper()
	if bin := os.Getenv("WYMCP_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("WYMCP_BIN: %v", err)
		}
		return bin
	}
	bin := filepath.Join(dir, "wymcp")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(root, "cmd", "wymcp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/wymcp: %v\n%s", err, out)
	}
	return bin
}

// proc is a child process that is stopped when the test ends, whatever
// happens: SIGTERM, then SIGKILL if it lingers.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, once done is closed
}

func startProc(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { _ = p.stop(5 * time.Second) })
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits up to grace for the exit, then kills. It
// returns the process's exit error, or an error if it had to be killed.
func (p *proc) stop(grace time.Duration) error {
	if p.exited() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.err
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not exit within %v of SIGTERM; killed", p.name, grace)
	}
}

// dumpOnFailure logs the tail of a child's log file if the test fails.
func dumpOnFailure(t *testing.T, name, path string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s log: %v", name, err)
			return
		}
		if len(b) > 16<<10 {
			b = b[len(b)-16<<10:]
		}
		t.Logf("%s log (%s, tail):\n%s", name, path, b)
	})
}

// freeAddrs returns n distinct loopback addresses whose ports were free a
// moment ago (all are held open together, so they differ).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// collector is the running collector and the files its exporters write.
type collector struct {
	grpcAddr, httpAddr      string
	tracesPath, metricsPath string
	proc                    *proc
}

// collectorConfig is the collector's configuration: OTLP in on two
// loopback ports, OTLP JSON out to two files (one request per line), the
// debug exporter to its log, and no listener of its own for internal
// metrics.
const collectorConfig = `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %[1]s
      http:
        endpoint: %[2]s
exporters:
  file/traces:
    path: %[3]q
    format: json
    flush_interval: 100ms
  file/metrics:
    path: %[4]q
    format: json
    flush_interval: 100ms
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file/traces, debug]
    metrics:
      receivers: [otlp]
      exporters: [file/metrics, debug]
`

func startCollector(t *testing.T, bin, dir string) *collector {
	t.Helper()
	addrs := freeAddrs(t, 2)
	c := &collector{
		grpcAddr:    addrs[0],
		httpAddr:    addrs[1],
		tracesPath:  filepath.Join(dir, "traces.jsonl"),
		metricsPath: filepath.Join(dir, "metrics.jsonl"),
	}
	cfg := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, collectorConfig, c.grpcAddr, c.httpAddr, c.tracesPath, c.metricsPath), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "otelcol.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	dumpOnFailure(t, "collector", logPath)
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	c.proc = startProc(t, "collector", cmd)

	deadline := time.Now().Add(listenTimeout)
	for _, addr := range []string{c.grpcAddr, c.httpAddr} {
		for {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			if c.proc.exited() {
				t.Fatalf("the collector exited before listening on %s: %v", addr, c.proc.err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the collector is not listening on %s after %v: %v", addr, listenTimeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// lineWriter collects a child's stdout and hands over its first line.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan string
	sent  bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		if line, _, ok := bytes.Cut(w.buf.Bytes(), []byte("\n")); ok {
			w.sent = true
			w.first <- string(line)
		}
	}
	return len(p), nil
}

// sentTrace is what exercise sent that the spans must reflect.
type sentTrace struct {
	service         string
	traceID, spanID string // the traceparent in the echo call's _meta
	ids             map[string]string
}

// exercise starts cmd/wymcp with env, sends the calls, stops it with
// SIGTERM and checks it exited cleanly.
func exercise(t *testing.T, bin, dir, service string, env []string) sentTrace {
	t.Helper()
	url, p := startServer(t, bin, dir, service, env)

	s := sentTrace{service: service, traceID: randomHex(t, 16), spanID: randomHex(t, 8), ids: map[string]string{}}
	traceparent := "00-" + s.traceID + "-" + s.spanID + "-01"
	client := &http.Client{Timeout: 10 * time.Second}
	type call struct {
		id, method, tool, params, meta string
		header                         map[string]string
		status                         int
		want                           string // a fragment of the answer
	}
	calls := []call{
		{id: "1", method: "tools/list", status: 200, want: `"name":"bad_result"`},
		{id: "2", method: "tools/call", tool: "echo", params: `"name":"echo","arguments":{"text":"hello collector"}`,
			meta: `"traceparent":"` + traceparent + `","tracestate":"e2e=collector",`, status: 200, want: `"text":"hello collector"`},
		{id: "3", method: "tools/call", tool: "panic", params: `"name":"panic","arguments":{}`, status: 200, want: `"isError":true`},
		{id: "4", method: "tools/call", tool: "bad_result", params: `"name":"bad_result","arguments":{}`, status: 200, want: `"code":-32603`},
		// Mcp-Name disagrees with the body: rejected at the protocol stage,
		// which wymcp.rejections counts.
		{id: "5", method: "tools/call", tool: "echo", params: `"name":"echo","arguments":{"text":"x"}`,
			header: map[string]string{"Mcp-Name": "other"}, status: 400, want: `"code":-32020`},
	}
	for _, c := range calls {
		status, answer := post(t, client, url, c.id, c.method, c.tool, c.params, c.meta, c.header)
		if status != c.status || !bytes.Contains(answer, []byte(c.want)) {
			t.Fatalf("%s %s: HTTP %d %s\nwant HTTP %d with %s", c.method, c.tool, status, answer, c.status, c.want)
		}
		if c.status == 200 {
			s.ids[strings.TrimSpace(c.method+" "+c.tool)] = c.id
		}
	}
	if err := p.stop(exitTimeout); err != nil {
		t.Fatalf("wymcp after SIGTERM: %v", err)
	}
	return s
}

// startServer starts cmd/wymcp on a free loopback port with args, env
// added to the test's environment without its OTEL_* variables, its log in
// dir/name.log (shown if the test fails), and returns the URL it printed.
func startServer(t *testing.T, bin, dir, name string, env []string, args ...string) (string, *proc) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	dumpOnFailure(t, name, logPath)
	out := &lineWriter{first: make(chan string, 1)}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdout, cmd.Stderr = out, logFile
	p := startProc(t, name, cmd)

	select {
	case line := <-out.first:
		const prefix = "wymcp listening on "
		if !strings.HasPrefix(line, prefix) {
			t.Fatalf("%s: wymcp's first line %q, want %q…", name, line, prefix)
		}
		return strings.TrimPrefix(line, prefix), p
	case <-p.done:
		t.Fatalf("%s: wymcp exited before listening: %v", name, p.err)
	case <-time.After(listenTimeout):
		t.Fatalf("%s: wymcp printed no listening line in %v", name, listenTimeout)
	}
	panic("unreachable")
}

// post sends one MCP request of the 2026-07-28 revision to url: params are
// the members of params besides _meta ("" for none), meta members of
// _meta besides the revision's two (each followed by a comma), header
// extra HTTP headers. It returns the HTTP status and the answer's body.
func post(t *testing.T, client *http.Client, url, id, method, tool, params, meta string, header map[string]string) (int, []byte) {
	t.Helper()
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params +
		`"_meta":{` + meta + `"io.modelcontextprotocol/protocolVersion":"` + protocolVersion +
		`","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Method", method)
	if tool != "" {
		req.Header.Set("Mcp-Name", tool)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, tool, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, tool, err)
	}
	return resp.StatusCode, answer
}

// cleanEnv is the test's environment without OTEL_* variables, so that only
// the ones a run sets reach the server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// The OTLP JSON the file exporter writes: one ExportTraceServiceRequest or
// ExportMetricsServiceRequest per line (proto3 JSON mapping: ids in hex,
// 64-bit integers as strings, enums as numbers).

type keyValue struct {
	Key   string                     `json:"key"`
	Value map[string]json.RawMessage `json:"value"`
}

// attrs flattens attributes to strings: a string as is, any other value as
// its JSON text with the quotes of 64-bit integers removed.
func attrs(kvs []keyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		for kind, raw := range kv.Value {
			var s string
			if kind == "stringValue" && json.Unmarshal(raw, &s) == nil {
				m[kv.Key] = s
			} else {
				m[kv.Key] = strings.Trim(string(raw), `"`)
			}
		}
	}
	return m
}

type resource struct {
	Attributes []keyValue `json:"attributes"`
}

type scope struct {
	Name string `json:"name"`
}

type span struct {
	TraceID      string          `json:"traceId"`
	SpanID       string          `json:"spanId"`
	ParentSpanID string          `json:"parentSpanId"`
	TraceState   string          `json:"traceState"`
	Name         string          `json:"name"`
	Kind         json.RawMessage `json:"kind"`
	Attributes   []keyValue      `json:"attributes"`
	Events       []struct {
		Name       string     `json:"name"`
		Attributes []keyValue `json:"attributes"`
	} `json:"events"`
	Status struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`
	scope string
}

type tracesLine struct {
	ResourceSpans []struct {
		Resource   resource `json:"resource"`
		ScopeSpans []struct {
			Scope scope  `json:"scope"`
			Spans []span `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type numberPoint struct {
	Attributes []keyValue      `json:"attributes"`
	AsInt      json.RawMessage `json:"asInt"`
}

type metric struct {
	Name      string `json:"name"`
	Unit      string `json:"unit"`
	Histogram *struct {
		DataPoints []struct {
			Attributes     []keyValue      `json:"attributes"`
			Count          json.RawMessage `json:"count"`
			ExplicitBounds []float64       `json:"explicitBounds"`
		} `json:"dataPoints"`
	} `json:"histogram"`
	Sum *struct {
		DataPoints  []numberPoint `json:"dataPoints"`
		IsMonotonic bool          `json:"isMonotonic"`
	} `json:"sum"`
	scope string
}

type metricsLine struct {
	ResourceMetrics []struct {
		Resource     resource `json:"resource"`
		ScopeMetrics []struct {
			Scope   scope    `json:"scope"`
			Metrics []metric `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

// readLines decodes each complete line of path (a line being written is
// left for the next poll). A missing file has no lines yet.
func readLines(path string, decode func([]byte) error) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := decode(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// output is what the collector wrote for one service.
type output struct {
	spans   []span
	metrics []metric // in file order: a later point is a later collection
}

func readOutput(c *collector, service string) (output, error) {
	var o output
	err := readLines(c.tracesPath, func(line []byte) error {
		var req tracesLine
		if err := json.Unmarshal(line, &req); err != nil {
			return err
		}
		for _, rs := range req.ResourceSpans {
			if attrs(rs.Resource.Attributes)["service.name"] != service {
				continue
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.scope = ss.Scope.Name
					o.spans = append(o.spans, s)
				}
			}
		}
		return nil
	})
	if err != nil {
		return o, err
	}
	err = readLines(c.metricsPath, func(line []byte) error {
		var req metricsLine
		if err := json.Unmarshal(line, &req); err != nil {
			return err
		}
		for _, rm := range req.ResourceMetrics {
			if attrs(rm.Resource.Attributes)["service.name"] != service {
				continue
			}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					m.scope = sm.Scope.Name
					o.metrics = append(o.metrics, m)
				}
			}
		}
		return nil
	})
	return o, err
}

// wantSpans and wantMetrics are what each run must produce.
var (
	wantSpans   = []string{"tools/list", "tools/call echo", "tools/call panic", "tools/call bad_result"}
	wantMetrics = []string{"mcp.server.operation.duration", "wymcp.rejections", "wymcp.calls.in_flight"}
)

// has reports whether o has a span of each name in spans and a metric of
// each name in metrics.
func (o output) has(spans, metrics []string) bool {
	for _, name := range spans {
		if !slices.ContainsFunc(o.spans, func(s span) bool { return s.Name == name }) {
			return false
		}
	}
	for _, name := range metrics {
		if !slices.ContainsFunc(o.metrics, func(m metric) bool { return m.Name == name }) {
			return false
		}
	}
	return true
}

// waitForOutput polls the collector's files until the service's spans and
// metrics (wantSpans, wantMetrics) are all there, or fails at outputTimeout.
func waitForOutput(t *testing.T, c *collector, service string) output {
	t.Helper()
	return waitFor(t, c, service, wantSpans, wantMetrics)
}

// waitFor polls the collector's files until the service has a span of each
// name in spans and a metric of each name in metrics, or fails at
// outputTimeout.
func waitFor(t *testing.T, c *collector, service string, wantSpans, wantMetrics []string) output {
	t.Helper()
	deadline := time.Now().Add(outputTimeout)
	for {
		o, err := readOutput(c, service)
		if err != nil {
			t.Fatalf("reading the collector's output: %v", err)
		}
		if o.has(wantSpans, wantMetrics) {
			return o
		}
		if c.proc.exited() {
			t.Fatalf("the collector exited: %v", c.proc.err)
		}
		if time.Now().After(deadline) {
			var spans, metrics []string
			for _, s := range o.spans {
				spans = append(spans, s.Name)
			}
			for _, m := range o.metrics {
				metrics = append(metrics, m.Name)
			}
			t.Fatalf("after %v the collector has, for %s, spans %q and metrics %q; want spans %q and metrics %q",
				outputTimeout, service, spans, metrics, wantSpans, wantMetrics)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// enumIs reports whether an OTLP JSON enum is n, written as a number or by
// name.
func enumIs(raw json.RawMessage, n int, name string) bool {
	s := strings.Trim(string(raw), `"`)
	return s == strconv.Itoa(n) || s == name
}

const (
	spanKindServer  = 2
	statusCodeError = 2
)

func checkSpans(t *testing.T, spans []span, sent sentTrace) {
	t.Helper()
	byName := map[string][]span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		if !enumIs(s.Kind, spanKindServer, "SPAN_KIND_SERVER") {
			t.Errorf("span %q kind %s, want SERVER (2)", s.Name, s.Kind)
		}
		if s.scope != "github.com/wymcp/wymcp" {
			t.Errorf("span %q scope %q, want github.com/wymcp/wymcp", s.Name, s.scope)
		}
		// Status Error iff error.type is set.
		_, hasErrType := attrs(s.Attributes)["error.type"]
		if isErr := enumIs(s.Status.Code, statusCodeError, "STATUS_CODE_ERROR"); isErr != hasErrType {
			t.Errorf("span %q: status %s with error.type set = %v", s.Name, s.Status.Code, hasErrType)
		}
	}
	one := func(name string) (span, bool) {
		if n := len(byName[name]); n != 1 {
			t.Errorf("%d spans named %q, want 1", n, name)
			return span{}, false
		}
		return byName[name][0], true
	}
	common := func(s span, method, tool string) map[string]string {
		a := attrs(s.Attributes)
		want := map[string]string{
			"mcp.method.name":      method,
			"mcp.protocol.version": protocolVersion,
			"jsonrpc.request.id":   sent.ids[strings.TrimSpace(method+" "+tool)],
			"network.transport":    "tcp",
		}
		if tool != "" {
			want["gen_ai.tool.name"] = tool
			want["gen_ai.operation.name"] = "execute_tool"
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("span %q: %s = %q, want %q", s.Name, k, a[k], v)
			}
		}
		return a
	}

	if s, ok := one("tools/list"); ok {
		a := common(s, "tools/list", "")
		if _, ok := a["error.type"]; ok {
			t.Errorf("tools/list: error.type %q on a good call", a["error.type"])
		}
	}
	if s, ok := one("tools/call echo"); ok {
		a := common(s, "tools/call", "echo")
		if _, ok := a["error.type"]; ok {
			t.Errorf("tools/call echo: error.type %q on a good call", a["error.type"])
		}
		// The parent is the traceparent sent in params._meta.
		if s.TraceID != sent.traceID || s.ParentSpanID != sent.spanID {
			t.Errorf("tools/call echo: trace %s parent %s, want _meta's traceparent %s / %s",
				s.TraceID, s.ParentSpanID, sent.traceID, sent.spanID)
		}
		if s.TraceState != "e2e=collector" {
			t.Errorf("tools/call echo: trace state %q, want _meta's", s.TraceState)
		}
	}

	// Both containment paths: status Error, error.type, and an exception
	// event with the whole stack of the panicking function.
	for _, c := range []struct {
		tool, errType, containment, message, frame string
	}{
		{"panic", "tool_error", "tool", "demo: the panic tool panicked", "main.demoTools.func"},
		{"bad_result", "-32603", "supervisor", "bad_result's structured content cannot be encoded", "main.explosive.MarshalJSON"},
	} {
		s, ok := one("tools/call " + c.tool)
		if !ok {
			continue
		}
		a := common(s, "tools/call", c.tool)
		if a["error.type"] != c.errType {
			t.Errorf("%s: error.type %q, want %q", s.Name, a["error.type"], c.errType)
		}
		if !enumIs(s.Status.Code, statusCodeError, "STATUS_CODE_ERROR") {
			t.Errorf("%s: status %s, want ERROR (2)", s.Name, s.Status.Code)
		}
		var exc []map[string]string
		for _, ev := range s.Events {
			if ev.Name == "exception" {
				exc = append(exc, attrs(ev.Attributes))
			}
		}
		if len(exc) != 1 {
			t.Errorf("%s: %d exception events, want 1", s.Name, len(exc))
			continue
		}
		e := exc[0]
		if e["exception.type"] == "" || !strings.Contains(e["exception.message"], c.message) {
			t.Errorf("%s: exception.type %q, exception.message %q, want a type and a message with %q",
				s.Name, e["exception.type"], e["exception.message"], c.message)
		}
		if e["wymcp.containment"] != c.containment {
			t.Errorf("%s: wymcp.containment %q, want %q", s.Name, e["wymcp.containment"], c.containment)
		}
		stack := e["exception.stacktrace"]
		// The whole stack: the goroutine header, the panic, the demo tool's
		// frame, and the goroutine's bottom ("created by"), which a
		// truncated capture loses.
		for _, want := range []string{"goroutine ", "panic(", c.frame, "\ncreated by "} {
			if !strings.Contains(stack, want) {
				t.Errorf("%s: exception.stacktrace (%d bytes) lacks %q:\n%s", s.Name, len(stack), want, stack)
				break
			}
		}
	}
}

func checkMetrics(t *testing.T, metrics []metric) {
	t.Helper()
	// Later collections repeat earlier points (cumulative temporality):
	// keep the last one of each metric.
	last := map[string]metric{}
	for _, m := range metrics {
		if m.scope != "github.com/wymcp/wymcp" {
			t.Errorf("metric %q scope %q, want github.com/wymcp/wymcp", m.Name, m.scope)
		}
		last[m.Name] = m
	}

	dur := last["mcp.server.operation.duration"]
	if dur.Histogram == nil || dur.Unit != "s" {
		t.Errorf("mcp.server.operation.duration: unit %q, histogram %v; want a histogram in s", dur.Unit, dur.Histogram != nil)
	} else {
		seen := map[string]bool{}
		for _, dp := range dur.Histogram.DataPoints {
			a := attrs(dp.Attributes)
			seen[a["mcp.method.name"]+" "+a["gen_ai.tool.name"]+" "+a["error.type"]] = true
			if n := strings.Trim(string(dp.Count), `"`); n == "" || n == "0" {
				t.Errorf("mcp.server.operation.duration point %v: count %q", a, n)
			}
			if len(dp.ExplicitBounds) == 0 || dp.ExplicitBounds[0] != 0.01 {
				t.Errorf("mcp.server.operation.duration point %v: bounds %v, want the semconv buckets from 0.01", a, dp.ExplicitBounds)
			}
		}
		for _, want := range []string{"tools/list  ", "tools/call echo ", "tools/call panic tool_error", "tools/call bad_result -32603"} {
			if !seen[want] {
				t.Errorf("mcp.server.operation.duration has no point for %q (method, tool, error.type); has %v", want, seen)
			}
		}
	}

	rej := last["wymcp.rejections"]
	found := false
	if rej.Sum != nil && rej.Sum.IsMonotonic {
		for _, dp := range rej.Sum.DataPoints {
			a := attrs(dp.Attributes)
			found = found || (a["wymcp.rejection.stage"] == "protocol" && a["http.response.status_code"] == "400" &&
				a["rpc.response.status_code"] == "-32020" && strings.Trim(string(dp.AsInt), `"`) == "1")
		}
	}
	if !found {
		t.Errorf("wymcp.rejections: no monotonic sum point {protocol, 400, -32020} = 1 for the rejected call: %+v", rej.Sum)
	}

	inFlight := last["wymcp.calls.in_flight"]
	if inFlight.Sum == nil || inFlight.Sum.IsMonotonic || len(inFlight.Sum.DataPoints) == 0 {
		t.Errorf("wymcp.calls.in_flight: %+v, want a non-monotonic sum (up-down counter)", inFlight.Sum)
	} else if v := strings.Trim(string(inFlight.Sum.DataPoints[0].AsInt), `"`); v != "" && v != "0" {
		// Read after the server drained and exited: nothing is in flight.
		t.Errorf("wymcp.calls.in_flight at exit = %s, want 0", v)
	}
}
