// Command soak runs a bounded, high-concurrency mixed load against the real
// cmd/wymcp binary on loopback and fails on any wrong answer or on memory
// that keeps growing.
//
//	go run ./cmd/soak              # 2 minutes, 64 clients
//	go run ./cmd/soak -d 15s       # the CI version
//
// It builds cmd/wymcp (or runs -bin), starts it on 127.0.0.1:0 with the demo
// tools, and runs -c clients for -d: echo, add, sleep 1 ms, tools/list,
// server/discover, and a few tool panics, tool errors and supervisor faults
// (bad_result). Every answer is checked byte for byte against its id. Every
// -sample it reads the server's VmRSS from /proc/<pid>/status and its live
// goroutines from the runtime's scheduler trace (GODEBUG=schedtrace,
// scheddetail on the child: no debug endpoint needed). At the end it stops
// the server with SIGTERM, which must exit 0, and fails if any request
// failed, or if the last third of the samples averages more than -growth
// times the first third plus a slack (RSS: 10 MiB; goroutines: 200).
// Linux only (/proc). Standard library only.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

func main() {
	os.Exit(exitCode(soak(os.Args[1:], os.Stderr), os.Stderr))
}

// exitCode maps soak's error to the process status: 0 for -h (the flag
// package has printed the usage), 2 for a bad command line (it has printed
// the error and the usage), 1 with "soak: FAIL: …" for a failed soak.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		fmt.Fprintln(stderr, "soak: FAIL:", err)
		return 1
	}
}

// usageError is a command line the flag package refused and reported.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

type config struct {
	duration, sample time.Duration
	clients, idle    int
	bin              string
	growth           float64
}

// soak runs the whole soak; the flag package writes to stderr.
func soak(args []string, stderr io.Writer) error {
	var c config
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&c.duration, "d", 2*time.Minute, "how long to run the load")
	fs.IntVar(&c.clients, "c", 64, "concurrent clients")
	fs.DurationVar(&c.sample, "sample", 2*time.Second, "how often to sample the server's memory and goroutines")
	fs.StringVar(&c.bin, "bin", "", "wymcp binary to run (default: go build ./cmd/wymcp)")
	fs.IntVar(&c.idle, "idle", 0, "idle keep-alive connections to hold open beside the load")
	fs.Float64Var(&c.growth, "growth", 1.5, "fail when the last third of the samples averages more than this times the first third (plus slack)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if c.duration <= 0 || c.clients <= 0 || c.sample <= 0 {
		fmt.Fprintln(fs.Output(), "soak: -d, -c and -sample must be positive")
		return usageError{errors.New("-d, -c and -sample must be positive")}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "soak: unexpected arguments: %q\n", fs.Args())
		return usageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}

	if c.bin == "" {
		dir, err := os.MkdirTemp("", "soak")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.bin = filepath.Join(dir, "wymcp")
		build := exec.Command("go", "build", "-o", c.bin, "github.com/wymcp/wymcp/cmd/wymcp")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building cmd/wymcp: %w", err)
		}
	}

	srv, err := startServer(c.bin, c.sample)
	if err != nil {
		return err
	}
	defer srv.kill()
	fmt.Printf("soak: %s for %v, %d clients, pid %d\n", srv.url, c.duration, c.clients, srv.cmd.Process.Pid)

	idle, err := holdIdle(srv.url, c.idle)
	defer func() {
		for _, conn := range idle {
			conn.Close()
		}
	}()
	if err != nil {
		return err
	}
	if c.idle > 0 {
		fmt.Printf("soak: holding %d idle keep-alive connections\n", len(idle))
	}

	ld, err := newLoad(srv.url, c.clients)
	if err != nil {
		return err
	}

	// Sample while the load runs.
	var samples []sample
	sampleErr := make(chan error, 1)
	stopSampling := make(chan struct{})
	begin := time.Now()
	go func() {
		t := time.NewTicker(c.sample)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				sampleErr <- nil
				return
			case <-t.C:
			}
			s, err := srv.sample()
			if err != nil {
				sampleErr <- err
				return
			}
			s.at, s.requests = time.Since(begin), ld.done.Load()
			samples = append(samples, s)
			fmt.Printf("soak: %6.1fs  requests %9d  errors %d  rss %6.1f MiB  goroutines %5d\n",
				s.at.Seconds(), s.requests, ld.errors.Load(), mib(s.rss), s.goroutines)
		}
	}()

	ld.run(c.duration)
	elapsed := time.Since(begin)
	close(stopSampling)
	if err := <-sampleErr; err != nil {
		return fmt.Errorf("sampling the server: %w", err)
	}

	// A graceful stop: every answer given, exit 0.
	exitErr := srv.stop(40 * time.Second)

	n, errs := ld.done.Load(), ld.errors.Load()
	fmt.Printf("soak: requests %d in %v (%.0f req/s), errors: %d\n", n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), errs)
	failures := ld.firstErrors()
	if errs > 0 {
		failures = append(failures, fmt.Sprintf("%d requests failed", errs))
	}
	if n == 0 {
		failures = append(failures, "no request was answered")
	}
	if exitErr != nil {
		failures = append(failures, fmt.Sprintf("server stop: %v; its last log lines:\n%s", exitErr, srv.tail()))
	}
	if len(samples) < 4 {
		failures = append(failures, fmt.Sprintf("only %d samples: run longer than 4 × -sample", len(samples)))
	} else {
		first, last := samples[0], samples[len(samples)-1]
		fmt.Printf("soak: rss first %.1f MiB, last %.1f MiB; goroutines first %d, last %d\n",
			mib(first.rss), mib(last.rss), first.goroutines, last.goroutines)
		if msg := growing("RSS", samples, func(s sample) float64 { return mib(s.rss) }, c.growth, 10, "MiB"); msg != "" {
			failures = append(failures, msg)
		}
		if msg := growing("goroutines", samples, func(s sample) float64 { return float64(s.goroutines) }, c.growth, 200, ""); msg != "" {
			failures = append(failures, msg)
		}
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "\n  "))
	}
	fmt.Println("soak: ok")
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// growing compares the averages of the first and last thirds of the
// samples. The first sample is left out: its goroutine count is from the
// scheduler trace before the load began.
func growing(what string, samples []sample, f func(sample) float64, growth, slack float64, unit string) string {
	samples = samples[1:]
	third := len(samples) / 3
	avg := func(ss []sample) float64 {
		sum := 0.0
		for _, s := range ss {
			sum += f(s)
		}
		return sum / float64(len(ss))
	}
	first, last := avg(samples[:third]), avg(samples[len(samples)-third:])
	fmt.Printf("soak: %s first-third average %.1f%s, last-third %.1f%s\n", what, first, unit, last, unit)
	if last > first*growth+slack {
		return fmt.Sprintf("%s keeps growing: last-third average %.1f%s > %.1f × first-third %.1f%s + %.0f", what, last, unit, growth, first, unit, slack)
	}
	return ""
}

// server is the wymcp child process.
type server struct {
	cmd  *exec.Cmd
	url  string
	exit chan error

	mu         sync.Mutex
	goroutines int      // live goroutines in the last complete scheduler trace
	logTail    []string // the last log lines, for a failure report
}

type sample struct {
	at         time.Duration
	requests   int64
	rss        uint64
	goroutines int
}

// schedG is one goroutine line of a scheddetail trace; status 6 is dead
// (a descriptor kept for reuse), 0 not yet started.
var schedG = regexp.MustCompile(`^\s+G\d+: status=(\d+)\(`)

func startServer(bin string, every time.Duration) (*server, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(),
		"OTEL_SDK_DISABLED=true",
		fmt.Sprintf("GODEBUG=schedtrace=%d,scheddetail=1", every.Milliseconds()))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, exit: make(chan error, 1), goroutines: -1}
	go s.readStderr(stderr)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("reading the listening line: %w", err)
	}
	go io.Copy(io.Discard, stdout)
	go func() { s.exit <- cmd.Wait() }()
	const prefix = "wymcp listening on "
	if !strings.HasPrefix(line, prefix) {
		s.kill()
		return nil, fmt.Errorf("unexpected first line %q", line)
	}
	s.url = strings.TrimSpace(strings.TrimPrefix(line, prefix))
	return s, nil
}

// readStderr counts the live goroutines of each scheduler trace and keeps
// the last log lines. A trace is complete when the next one starts.
func (s *server) readStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	live, inTrace := 0, false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "SCHED ") {
			if inTrace {
				s.mu.Lock()
				s.goroutines = live
				s.mu.Unlock()
			}
			live, inTrace = 0, true
			continue
		}
		if m := schedG.FindStringSubmatch(line); m != nil {
			if st, _ := strconv.Atoi(m[1]); st&^0x1000 != 6 && st != 0 {
				live++
			}
			continue
		}
		if strings.HasPrefix(line, "  P") || strings.HasPrefix(line, "  M") {
			continue
		}
		s.mu.Lock()
		s.logTail = append(s.logTail, line)
		if len(s.logTail) > 40 {
			s.logTail = s.logTail[len(s.logTail)-20:]
		}
		s.mu.Unlock()
	}
}

func (s *server) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.logTail, "\n")
}

func (s *server) sample() (sample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return sample{}, err
	}
	var out sample
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return sample{}, fmt.Errorf("VmRSS %q: %w", v, err)
			}
			out.rss = kb << 10
		}
	}
	if out.rss == 0 {
		return sample{}, errors.New("no VmRSS in /proc/<pid>/status")
	}
	s.mu.Lock()
	out.goroutines = s.goroutines
	s.mu.Unlock()
	return out, nil
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(timeout time.Duration) error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-s.exit:
		s.exit <- err
		return err
	case <-time.After(timeout):
		return fmt.Errorf("did not exit within %v of SIGTERM", timeout)
	}
}

func (s *server) kill() {
	select {
	case err := <-s.exit:
		s.exit <- err
	default:
		s.cmd.Process.Kill()
	}
}

// load is the clients and their tally.
type load struct {
	url     string
	clients int
	client  *http.Client
	// Answers that do not depend on the request: tools/list and discover
	// (with id 0), and the serverInfo _meta that ends every result.
	list, discover, serverInfo string

	next, done, errors atomic.Int64
	mu                 sync.Mutex
	errs               []string
}

func newLoad(url string, clients int) (*load, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = clients
	tr.MaxConnsPerHost = clients
	l := &load{url: url, clients: clients, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	var err error
	if l.list, err = l.reference("tools/list"); err != nil {
		return nil, err
	}
	if l.discover, err = l.reference("server/discover"); err != nil {
		return nil, err
	}
	i := strings.Index(l.discover, `"_meta":{"io.modelcontextprotocol/serverInfo"`)
	if i < 0 || !strings.HasSuffix(l.discover, "}}") {
		return nil, fmt.Errorf("server/discover answered %s", l.discover)
	}
	l.serverInfo = l.discover[i : len(l.discover)-2]
	return l, nil
}

func (l *load) reference(method string) (string, error) {
	status, body, err := l.post(context.Background(), mcptest.Call(method, "").WithID(0))
	if err != nil {
		return "", err
	}
	if status != 200 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":0,"result":`) {
		return "", fmt.Errorf("%s answered %d %s", method, status, body)
	}
	return body, nil
}

// post sends r, built by the tests' client (internal/mcptest), and returns
// the status and the answer as received.
func (l *load) post(ctx context.Context, r mcptest.RPC) (int, string, error) {
	req, err := r.Request(ctx, l.url)
	if err != nil {
		return 0, "", err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return resp.StatusCode, "", err
	}
	return resp.StatusCode, b.String(), nil
}

// run drives the clients for d.
func (l *load) run(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range l.clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				l.one(l.next.Add(1))
			}
		})
	}
	wg.Wait()
	l.client.CloseIdleConnections()
}

// one sends request n, of a kind chosen by n, and checks its answer.
func (l *load) one(n int64) {
	id := strconv.FormatInt(n, 10)
	result := func(content string, isError bool) string {
		e := ""
		if isError {
			e = `"isError":true,`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[` + content + `],` + e + `"resultType":"complete",` + l.serverInfo + `}}`
	}
	call := func(tool, args string) mcptest.RPC { return mcptest.ToolCall(tool, args).WithID(int(n)) }
	var r mcptest.RPC
	var want string
	switch k := n % 100; {
	case k < 30:
		text := "soak " + id
		r, want = call("echo", `{"text":"`+text+`"}`), result(`{"type":"text","text":"`+text+`"}`, false)
	case k < 50:
		sum := strconv.FormatFloat(float64(n)+0.5, 'f', -1, 64)
		r = call("add", `{"a":`+id+`,"b":0.5}`)
		want = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"{\"sum\":` + sum + `}"}],"structuredContent":{"sum":` + sum + `},"resultType":"complete",` + l.serverInfo + `}}`
	case k < 60:
		r, want = call("sleep", `{"ms":1}`), result(`{"type":"text","text":"slept 1 ms"}`, false)
	case k < 75:
		r = mcptest.Call("tools/list", "").WithID(int(n))
		want = strings.Replace(l.list, `"id":0,`, `"id":`+id+`,`, 1)
	case k < 90:
		r = mcptest.Call("server/discover", "").WithID(int(n))
		want = strings.Replace(l.discover, `"id":0,`, `"id":`+id+`,`, 1)
	case k < 94:
		r, want = call("panic", `{}`), result(`{"type":"text","text":"Tool execution failed: internal error"}`, true)
	case k < 97:
		r, want = call("fail", `{}`), result(`{"type":"text","text":"this tool always fails"}`, true)
	default:
		r = call("bad_result", `{}`)
		want = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"Internal error"}}`
	}
	method, name := r.Headers["Mcp-Method"], r.Headers["Mcp-Name"]
	// Requests are not cut short at the end of the run: every one sent is
	// answered and checked.
	status, got, err := l.post(context.Background(), r)
	l.done.Add(1)
	switch {
	case err != nil:
		l.fail(fmt.Sprintf("id %s %s %s: %v", id, method, name, err))
	case status != http.StatusOK || got != want:
		l.fail(fmt.Sprintf("id %s %s %s: %d %s\n    want 200 %s", id, method, name, status, got, want))
	}
}

func (l *load) fail(msg string) {
	l.errors.Add(1)
	l.mu.Lock()
	if len(l.errs) < 10 {
		l.errs = append(l.errs, msg)
	}
	l.mu.Unlock()
}

func (l *load) firstErrors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}
