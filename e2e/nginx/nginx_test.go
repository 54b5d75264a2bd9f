package nginx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cluster is N replicas behind nginx.
type cluster struct {
	t     *testing.T
	s     settings
	bin   string
	args  []string // the replicas' flags besides -addr
	drain bool     // the binary has -drain-delay
	// legacy: the binary has -versions, and the replicas serve the 2025 era
	// too: half the load speaks it (docs/design.md §1a).
	legacy   bool
	replicas []*replica
	front    *front
	begin    time.Time

	mu     sync.Mutex
	events []string // restarts, for the report
}

func newCluster(t *testing.T, s settings, n int) *cluster {
	t.Helper()
	c := &cluster{t: t, s: s, bin: wymcpBinary(t, s), begin: time.Now()}
	c.drain = hasFlag(t, c.bin, "drain-delay")
	if c.drain {
		// The replicas run with the flags deploy/nginx/README.md
		// recommends behind nginx: the defaults, unless
		// WYMCP_E2E_DRAIN_DELAY says otherwise.
		if s.drainDelay == 0 {
			def := flagDefault(t, c.bin, "drain-delay")
			d, err := time.ParseDuration(def)
			if err != nil {
				t.Fatalf("the binary's -drain-delay default %q: %v", def, err)
			}
			c.s.drainDelay, s.drainDelay = d, d
		} else {
			c.args = append(c.args, "-drain-delay", s.drainDelay.String())
		}
		// Every connection idle at SIGTERM must be closed by nginx before
		// the replica stops serving: the drain must outlast nginx's
		// upstream keepalive_timeout.
		if k := upstreamKeepalive(t); s.drainDelay <= k {
			t.Fatalf("-drain-delay %v must exceed deploy/nginx/wymcp.conf's upstream keepalive_timeout %v", s.drainDelay, k)
		}
	}
	if c.legacy = hasFlag(t, c.bin, "versions"); c.legacy {
		c.args = append(c.args, "-versions", "2026-07-28,2025-11-25,2025-06-18")
	}
	c.args = append(c.args, s.extraArgs...)
	var addrs []string
	for i := range n {
		r, err := startReplica(t, c.bin, i, "127.0.0.1:0", c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := waitReady("http://"+r.addr, 10*time.Second, func() bool { return !r.p.exited() }); err != nil {
			t.Fatal(err)
		}
		c.replicas = append(c.replicas, r)
		addrs = append(addrs, r.addr)
	}
	c.front = startNginx(t, s, addrs)
	mode := "binary without -drain-delay (the old stop)"
	if c.drain {
		mode = "-drain-delay " + s.drainDelay.String()
	}
	if len(s.extraArgs) > 0 {
		mode += ", replica flags " + strings.Join(s.extraArgs, " ")
	}
	t.Logf("nginx %s in front of %d replicas %v; %s", c.front.base, n, addrs, mode)
	return c
}

func (c *cluster) event(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, fmt.Sprintf("%7.3fs  ", time.Since(c.begin).Seconds())+fmt.Sprintf(format, args...))
}

// restart stops replica i with SIGTERM, waits for its exit, starts a new one
// on the same address and waits until it is ready.
func (c *cluster) restart(i int) error {
	old := c.replicas[i]
	c.event("SIGTERM replica %d (%s, pid %d)", i, old.addr, old.p.cmd.Process.Pid)
	// Bounded: the drain delay, calls in flight (echo: none long) and margin.
	bound := 15 * time.Second
	if c.drain {
		bound += c.s.drainDelay
	}
	if err := old.p.signalAndWait(syscall.SIGTERM, bound); err != nil {
		return fmt.Errorf("replica %d: %v; its log:\n%s", i, err, old.p.logs.String())
	}
	c.event("replica %d exited 0", i)
	c.keepLog(old)
	var (
		r   *replica
		err error
	)
	// The port is free now; a few tries in case the bind loses a race.
	for try := 0; try < 5; try++ {
		if r, err = startReplica(c.t, c.bin, i, old.addr, c.args); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	if err := waitReady("http://"+r.addr, 10*time.Second, func() bool { return !r.p.exited() }); err != nil {
		return err
	}
	c.replicas[i] = r
	c.event("replica %d ready again (pid %d)", i, r.p.cmd.Process.Pid)
	return nil
}

// keepLog copies an exited replica's last log lines into WYMCP_E2E_OUT.
func (c *cluster) keepLog(r *replica) {
	if c.s.out == "" {
		return
	}
	dir := filepath.Join(c.s.out, c.t.Name())
	if err := os.MkdirAll(dir, 0o755); err == nil {
		name := fmt.Sprintf("replica-%d-pid-%d.log", r.index, r.p.cmd.Process.Pid)
		_ = os.WriteFile(filepath.Join(dir, name), []byte(r.p.logs.String()+"\n"), 0o644)
	}
}

func (c *cluster) report() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, "\n")
}

// load is the clients' tally.
type load struct {
	url    string
	client *http.Client
	begin  time.Time

	// legacy: odd-numbered calls, and every client's opening initialize,
	// are a 2025-11-25 client's (no session: any replica answers them).
	legacy                       bool
	next, calls, ok, legacyCalls atomic.Int64
	mu                           sync.Mutex
	kinds                        map[string]int // failure kind -> count
	samples                      []string       // the first failures, in full
}

func newLoad(url string, clients int, begin time.Time) *load {
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients, // every client keeps its connection to nginx
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &load{url: url, client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, begin: begin, kinds: map[string]int{}}
}

func (l *load) fail(kind, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds[kind]++
	if len(l.samples) < 20 {
		l.samples = append(l.samples, fmt.Sprintf("%7.3fs  %s: %s", time.Since(l.begin).Seconds(), kind, detail))
	}
}

// one sends one echo call with a text and an id no other call has, and
// checks that this call's answer came back: status, id and text.
func (l *load) one(n int64) {
	id := strconv.FormatInt(n, 10)
	text := "e2e echo " + id + " " + strconv.FormatInt(n*7919%1000003, 36)
	legacy := l.legacy && n%2 == 1
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"},` + metaJSON + `}}`
	if legacy {
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
	}
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(body))
	if err != nil {
		l.fail("request", err.Error())
		return
	}
	if legacy {
		legacyHeaders(req)
		l.legacyCalls.Add(1)
	} else {
		mcpHeaders(req, "tools/call", "echo")
	}
	// Every call sent is answered and checked, the last ones too.
	resp, err := l.client.Do(req)
	l.calls.Add(1)
	if err != nil {
		l.fail("transport: "+shortErr(err), "id "+id+": "+err.Error())
		return
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		l.fail("reading answer: "+shortErr(err), "id "+id+": "+err.Error())
		return
	}
	if resp.StatusCode != http.StatusOK {
		l.fail("HTTP "+strconv.Itoa(resp.StatusCode), "id "+id+": "+oneLine(b))
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		l.fail("content type", "id "+id+": "+ct)
		return
	}
	var a jsonrpcAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		l.fail("not JSON", "id "+id+": "+string(b))
		return
	}
	switch {
	case string(a.ID) != id:
		l.fail("crossed (another call's id)", "sent id "+id+", got "+string(b))
	case a.Result != nil && (len(a.Result.Content) != 1 || a.Result.Content[0].Text != text):
		l.fail("crossed (another call's text)", "sent id "+id+" text "+strconv.Quote(text)+", got "+string(b))
	case a.JSONRPC != "2.0" || a.Error != nil || a.Result == nil || a.Result.IsError || a.Result.Content[0].Type != "text":
		l.fail("wrong answer", "id "+id+": "+string(b))
	case legacy == strings.Contains(string(b), `"resultType"`):
		l.fail("wrong era", "id "+id+": "+string(b))
	default:
		l.ok.Add(1)
	}
}

// initialize opens a 2025-11-25 client: its initialize, answered by any
// replica (no session id is issued), counted as a call.
func (l *load) initialize() {
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
	if err != nil {
		l.fail("request", err.Error())
		return
	}
	legacyHeaders(req)
	req.Header.Del("MCP-Protocol-Version")
	resp, err := l.client.Do(req)
	l.calls.Add(1)
	l.legacyCalls.Add(1)
	if err != nil {
		l.fail("transport: "+shortErr(err), "initialize: "+err.Error())
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"protocolVersion":"2025-11-25"`) || resp.Header.Get("Mcp-Session-Id") != "" {
		l.fail("initialize", "HTTP "+strconv.Itoa(resp.StatusCode)+": "+oneLine(b))
		return
	}
	l.ok.Add(1)
}

// legacyHeaders are a 2025-11-25 client's, past its initialize.
func legacyHeaders(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
}

// oneLine shortens an answer for a report: nginx's error pages by their
// title, anything else to its first 200 bytes on one line.
func oneLine(b []byte) string {
	s := string(b)
	if i := strings.Index(s, "<title>"); i >= 0 {
		if j := strings.Index(s[i:], "</title>"); j >= 0 {
			return "nginx page: " + s[i+len("<title>"):i+j]
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func (l *load) failures() (total int, kinds []string, status502 int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range l.kinds {
		total += v
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(kinds)
	return total, kinds, l.kinds["HTTP 502"]
}

// TestRollingRestartBehindNginx: sustained echo load through nginx while
// every replica is restarted in turn, WYMCP_E2E_ROUNDS times. Not one call
// may fail or come back with another call's answer.
func TestRollingRestartBehindNginx(t *testing.T) {
	s := loadSettings(t)
	c := newCluster(t, s, s.replicas)
	l := newLoad(c.front.base+"/mcp", s.clients, c.begin)
	l.legacy = c.legacy

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	loadBegin := time.Now()
	c.event("load starts: %d clients", s.clients)
	for range s.clients {
		wg.Go(func() {
			if l.legacy {
				l.initialize()
			}
			for ctx.Err() == nil {
				l.one(l.next.Add(1))
			}
		})
	}

	// Warm up, so that nginx holds keep-alive connections to every replica,
	// then roll.
	const warmup, cooldown = 1500 * time.Millisecond, 1500 * time.Millisecond
	// Between two replicas: nginx skips a replica that refused a connection
	// for the servers' fail_timeout, so a restarted replica may stay
	// skipped that long. Stopping the next one sooner could leave every
	// replica skipped at once: 502 "no live upstreams", nginx's doing, not
	// the server's. With a drain (each restart lasts longer than
	// fail_timeout) and three replicas or more, one is always taken.
	// A drained replica may also stop within milliseconds of SIGTERM
	// (its drain ends once nginx has closed its last connection), so a
	// restart can be shorter than fail_timeout: the pause cannot rely on
	// the drain.
	settle := serverFailTimeout(t) + 500*time.Millisecond
	time.Sleep(warmup)
	var restartErr error
	restarts := 0
roll:
	for round := 1; round <= s.rounds; round++ {
		for i := range c.replicas {
			if err := c.restart(i); err != nil {
				restartErr = fmt.Errorf("round %d: %w", round, err)
				break roll
			}
			restarts++
			time.Sleep(settle)
		}
	}
	time.Sleep(cooldown)
	if rest := s.duration - time.Since(loadBegin); rest > 0 {
		time.Sleep(rest)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(loadBegin)
	c.event("load stopped")
	l.client.CloseIdleConnections()

	// Let nginx flush its logs before reading them.
	c.front.stop(t, s)

	calls, ok := l.calls.Load(), l.ok.Load()
	total, kinds, n502 := l.failures()
	t.Logf("timeline:\n%s", c.report())
	t.Logf("rolling restart: %d replicas, %d clients, %d restarts in %d rounds (%v apart), %v: calls %d, ok %d, failed %d (HTTP 502: %d), %.0f calls/s",
		s.replicas, s.clients, restarts, s.rounds, settle, elapsed.Round(time.Millisecond), calls, ok, total, n502, float64(calls)/elapsed.Seconds())
	if total > 0 {
		t.Logf("failures by kind:\n  %s", strings.Join(kinds, "\n  "))
		l.mu.Lock()
		t.Logf("first failures:\n  %s", strings.Join(l.samples, "\n  "))
		l.mu.Unlock()
	}
	if lost := c.front.lost502(); len(lost) > 0 {
		var ls []string
		for k, v := range lost {
			ls = append(ls, fmt.Sprintf("%d  %s", v, k))
		}
		sort.Strings(ls)
		t.Logf("nginx access log, 502s by cause:\n  %s", strings.Join(ls, "\n  "))
	}
	if ek := errorKinds(c.front.errorLog()); len(ek) > 0 {
		t.Logf("nginx error log, by message:\n%s", strings.Join(ek, "\n"))
	}
	// The summary line, for CI logs and for the README's numbers.
	fmt.Printf("e2e-nginx: rolling restart: calls %d (2025 era %d), failed %d, 502 %d, crossed %d, restarts %d, %v\n",
		calls, l.legacyCalls.Load(), total, n502, l.kinds["crossed (another call's id)"]+l.kinds["crossed (another call's text)"], restarts, elapsed.Round(time.Millisecond))

	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if calls == 0 || ok == 0 {
		t.Fatal("no call was answered")
	}
	if restarts != s.rounds*s.replicas {
		t.Fatalf("%d restarts, want %d", restarts, s.rounds*s.replicas)
	}
	if total > 0 {
		msg := fmt.Sprintf("%d of %d calls failed during rolling restarts behind nginx (HTTP 502: %d)", total, calls, n502)
		if !c.drain {
			msg += "; the binary has no -drain-delay: this is the loss the server-side drain must remove"
		}
		t.Error(msg)
	}
}

// sseEvent is one event of a stream and when its data line arrived.
type sseEvent struct {
	at   time.Duration
	data string
}

// TestProgressStreamThroughNginx: a call that reports progress, streamed
// through nginx, arrives as text/event-stream with every progress event
// before the result, each as the tool reports it (nginx does not buffer).
func TestProgressStreamThroughNginx(t *testing.T) {
	s := loadSettings(t)
	c := newCluster(t, s, 2)

	// The demo's sleep tool reports progress 0, then every tenth of ms.
	const ms = 1500
	const token = "e2e-progress-1"
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":` + strconv.Itoa(ms) + `},` +
		`"_meta":{"progressToken":"` + token + `","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.front.base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	mcpHeaders(req, "tools/call", "sleep")
	start := time.Now()
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type %q, want text/event-stream; body: %s", ct, b)
	}

	// Read the events as they arrive.
	var events []sseEvent
	rd := bufio.NewReader(resp.Body)
	var data bytes.Buffer
	for {
		line, err := rd.ReadString('\n')
		if line == "\n" && data.Len() > 0 {
			events = append(events, sseEvent{at: time.Since(start), data: data.String()})
			data.Reset()
		} else if v, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimSpace(v))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
	}
	total := time.Since(start)

	var progress []sseEvent
	var result *sseEvent
	var lines []string
	for i, e := range events {
		lines = append(lines, fmt.Sprintf("%7.1f ms  %s", float64(e.at.Microseconds())/1000, e.data))
		var a jsonrpcAnswer
		if err := json.Unmarshal([]byte(e.data), &a); err != nil {
			t.Fatalf("event %d is not JSON: %s", i, e.data)
		}
		switch {
		case a.Method == "notifications/progress":
			if result != nil {
				t.Errorf("progress event after the result: %s", e.data)
			}
			var p struct {
				ProgressToken string  `json:"progressToken"`
				Progress      float64 `json:"progress"`
			}
			if err := json.Unmarshal(a.Params, &p); err != nil || p.ProgressToken != token {
				t.Errorf("progress event with the wrong token: %s", e.data)
			}
			progress = append(progress, e)
		case string(a.ID) == "42":
			if result != nil {
				t.Errorf("a second result: %s", e.data)
			}
			if a.Result == nil || len(a.Result.Content) != 1 || a.Result.Content[0].Text != fmt.Sprintf("slept %d ms", ms) {
				t.Errorf("result: %s", e.data)
			}
			result = &events[i]
		default:
			t.Errorf("unexpected event: %s", e.data)
		}
	}
	t.Logf("%d events in %v through nginx:\n%s", len(events), total.Round(time.Millisecond), strings.Join(lines, "\n"))
	if result == nil {
		t.Fatal("no result event")
	}
	if len(progress) != 11 {
		t.Errorf("%d progress events, want 11 (0 and every tenth)", len(progress))
	}
	if len(progress) == 0 {
		t.FailNow()
	}
	// Incremental: the first report comes at once, the last near the end,
	// each about ms/10 after the one before. Buffered by nginx, they would
	// all arrive with the result.
	first, last := progress[0].at, progress[len(progress)-1].at
	sleep := time.Duration(ms) * time.Millisecond
	if first > sleep/3 {
		t.Errorf("first progress event after %v of a %v call: the stream is buffered", first, sleep)
	}
	if spread := last - first; spread < sleep*6/10 {
		t.Errorf("progress events spread over %v of a %v call: the stream is buffered", spread, sleep)
	}
	if gap := result.at - first; gap < sleep*8/10 {
		t.Errorf("the result came %v after the first progress event, the call sleeps %v: the stream is buffered", gap, sleep)
	}
	fmt.Printf("e2e-nginx: progress stream: %d progress events then the result; first at %v, last at %v, result at %v\n",
		len(progress), first.Round(time.Millisecond), last.Round(time.Millisecond), result.at.Round(time.Millisecond))
}
