package nginx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The settings, from the environment, with defaults that keep the whole
// package under about 40 s on a 2-core machine.
type settings struct {
	replicas   int           // WYMCP_E2E_REPLICAS
	clients    int           // WYMCP_E2E_CLIENTS
	rounds     int           // WYMCP_E2E_ROUNDS: rolling restarts of every replica
	duration   time.Duration // WYMCP_E2E_DURATION: the least time the load runs
	drainDelay time.Duration // WYMCP_E2E_DRAIN_DELAY: -drain-delay, when the binary has it (0: its default)
	bin        string        // WYMCP_E2E_BIN: a wymcp binary to run instead of building cmd/wymcp
	nginx      string        // WYMCP_E2E_NGINX_BIN: the nginx binary (default: PATH, then /usr/sbin)
	out        string        // WYMCP_E2E_OUT: a directory to copy nginx's and the replicas' logs into
	extraArgs  []string      // WYMCP_E2E_REPLICA_ARGS: more flags for every replica, space-separated
}

func loadSettings(t *testing.T) settings {
	t.Helper()
	if os.Getenv(envRun) != "1" {
		t.Skip("set " + envRun + "=1 to run the end-to-end test behind nginx (.ci/install-nginx.sh installs nginx)")
	}
	s := settings{
		replicas:   envInt(t, "WYMCP_E2E_REPLICAS", 3),
		clients:    envInt(t, "WYMCP_E2E_CLIENTS", 200),
		rounds:     envInt(t, "WYMCP_E2E_ROUNDS", 2),
		duration:   envDuration(t, "WYMCP_E2E_DURATION", 10*time.Second),
		drainDelay: envDuration(t, "WYMCP_E2E_DRAIN_DELAY", 0),
		bin:        os.Getenv("WYMCP_E2E_BIN"),
		nginx:      os.Getenv("WYMCP_E2E_NGINX_BIN"),
		out:        os.Getenv("WYMCP_E2E_OUT"),
		extraArgs:  strings.Fields(os.Getenv("WYMCP_E2E_REPLICA_ARGS")),
	}
	if s.replicas < 2 || s.clients < 1 || s.rounds < 0 {
		t.Fatalf("WYMCP_E2E_REPLICAS must be at least 2, WYMCP_E2E_CLIENTS at least 1, WYMCP_E2E_ROUNDS at least 0")
	}
	return s
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

// repoRoot is ../.. of this package, checked by its go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(b, []byte("module github.com/wymcp/wymcp\n")) {
		t.Fatalf("%s is not the wymcp repository root (go.mod: %v)", root, err)
	}
	return root
}

// The binary is built once for the package's tests.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// envRun turns the package's tests on.
const envRun = "WYMCP_E2E_NGINX"

// TestMain runs nothing without envRun, and says so on one line: go test
// shows it with -v or in a package's directory, and its summary line reads
// "ok … [no tests to run]", not a bare "ok" that passes for a run.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(envRun) != "1" {
		fmt.Println("e2e/nginx: skipped: set " + envRun + "=1 to run against a real nginx (.ci/install-nginx.sh installs it)")
		_ = flag.Set("test.run", "^$")
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// wymcpBinary returns the binary under test: WYMCP_E2E_BIN, or cmd/wymcp
// built from the repository root.
func wymcpBinary(t *testing.T, s settings) string {
	t.Helper()
	if s.bin != "" {
		return s.bin
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "wymcp-e2e-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "wymcp")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/wymcp")
		cmd.Dir = repoRoot(t)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		begin := time.Now()
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/wymcp: %v\n%s", err, out.String())
			return
		}
		t.Logf("built cmd/wymcp in %v", time.Since(begin).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// hasFlag reports whether the binary's -h output lists the flag.
func hasFlag(t *testing.T, bin, flag string) bool {
	t.Helper()
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	if !bytes.Contains(out, []byte("-addr")) {
		t.Fatalf("%s -h printed no usage:\n%s", bin, out)
	}
	return bytes.Contains(out, []byte("  -"+flag+" ")) || bytes.Contains(out, []byte("  -"+flag+"\n"))
}

// flagDefault returns the default the binary's -h output gives the flag
// ("(default 5s)"), or "" when it states none.
func flagDefault(t *testing.T, bin, flag string) string {
	t.Helper()
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	m := regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(flag) + `\b[^\n]*\n((?:    \t[^\n]*\n)*)`).FindSubmatch(out)
	if m == nil {
		return ""
	}
	d := regexp.MustCompile(`\(default ([^)]*)\)`).FindSubmatch(m[0])
	if d == nil {
		return ""
	}
	return string(d[1])
}

func findNginx(t *testing.T, s settings) string {
	t.Helper()
	if s.nginx != "" {
		return s.nginx
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	t.Fatal("WYMCP_E2E_NGINX=1 but nginx is not installed: run .ci/install-nginx.sh")
	return ""
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ring keeps the last lines a process wrote, for failure reports.
type ring struct {
	mu    sync.Mutex
	lines []string
}

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	if len(r.lines) > 60 {
		r.lines = append(r.lines[:0], r.lines[len(r.lines)-30:]...)
	}
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// lineWriter adds what it is given to a ring, line by line.
type lineWriter struct{ r *ring }

func (w lineWriter) Write(b []byte) (int, error) {
	for line := range strings.Lines(string(b)) {
		w.r.add(strings.TrimRight(line, "\n"))
	}
	return len(b), nil
}

// proc is a child process in its own process group, killed with its group
// when the test ends.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // its exit status, once done is closed
	logs ring
}

func startProc(t *testing.T, name string, cmd *exec.Cmd) (*proc, io.Reader) {
	t.Helper()
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	// Its own process group, so that the cleanup kills it and anything it
	// started (nginx's workers) at once; and killed if the test dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Writers rather than pipes, so that Wait returns only after the last
	// line is read. stdout is read by the caller (the listening line).
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = lineWriter{&p.logs}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(p.kill)
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	return p, pr
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the whole process group, whatever its state.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// signalAndWait sends sig and waits up to timeout for the exit.
func (p *proc) signalAndWait(sig syscall.Signal, timeout time.Duration) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !p.exited() {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %v of %v", p.name, timeout, sig)
	}
}

// replica is one wymcp process; restarts keep its address.
type replica struct {
	index int
	addr  string // 127.0.0.1:port
	p     *proc
}

const listeningPrefix = "wymcp listening on http://"

// startReplica starts the binary on addr (port 0 the first time) and reads
// its listening line.
func startReplica(t *testing.T, bin string, index int, addr string, args []string) (*replica, error) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), "OTEL_SDK_DISABLED=true")
	p, stdout := startProc(t, fmt.Sprintf("replica %d", index), cmd)
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		l, _ := r.ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, r)
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(15 * time.Second):
		p.kill()
		return nil, fmt.Errorf("replica %d printed no listening line in 15 s; stderr:\n%s", index, p.logs.String())
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(l), listeningPrefix)
	if !ok {
		p.kill()
		<-p.done
		return nil, fmt.Errorf("replica %d: first line %q (exit %v); stderr:\n%s", index, l, p.err, p.logs.String())
	}
	host, _, _ := strings.Cut(rest, "/")
	return &replica{index: index, addr: host, p: p}, nil
}

// mcpHeaders sets the headers of a 2026-07-28 request.
func mcpHeaders(req *http.Request, method, name string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
}

const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

const discoverBody = `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{` + metaJSON + `}}`

// probeClient is for health checks: no keep-alive, so a probe never holds a
// connection to a replica that is about to stop.
var probeClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// ready reports whether the replica (or nginx) at base answers: /readyz 200
// when the binary has it; server/discover 200 when /readyz is 404 (a binary
// from before the drain).
func ready(base, mcpPath string) (bool, string) {
	resp, err := probeClient.Get(base + "/readyz")
	if err != nil {
		return false, err.Error()
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, "/readyz 200"
	case http.StatusNotFound:
	default:
		return false, fmt.Sprintf("/readyz %d", resp.StatusCode)
	}
	return discovered(probeClient, base+mcpPath)
}

// discovered posts server/discover and checks the answer's shape.
func discovered(c *http.Client, url string) (bool, string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(discoverBody))
	mcpHeaders(req, "server/discover", "")
	resp, err := c.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0","id":0,"result":`)) {
		return false, fmt.Sprintf("server/discover %d %s", resp.StatusCode, b)
	}
	return true, "server/discover 200"
}

// waitReady polls until ready or the timeout.
func waitReady(base string, timeout time.Duration, alive func() bool) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if alive != nil && !alive() {
			return fmt.Errorf("%s: the process exited (last probe: %s)", base, last)
		}
		ok, why := ready(base, "/mcp")
		if ok {
			return nil
		}
		last = why
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %v (last probe: %s)", base, timeout, last)
}

// The template's marked lines (deploy/nginx/wymcp.conf).
var (
	replicasBlock = regexp.MustCompile(`(?s)([ \t]*)# e2e:replicas begin\n(.*?)[ \t]*# e2e:replicas end\n`)
	serverLine    = regexp.MustCompile(`(?m)^\s*server\s+(\S+)(.*);`)
	listenLine    = regexp.MustCompile(`(?m)^([ \t]*)listen\s+\S+;(\s*# e2e:listen)$`)
	upstreamKeep  = regexp.MustCompile(`(?s)upstream wymcp \{.*?\n\s*keepalive_timeout\s+(\d+)s;`)
	failTimeout   = regexp.MustCompile(`fail_timeout=(\d+)s`)
)

// templatePath is the shipped config, the one under test.
func templatePath(t *testing.T) string {
	return filepath.Join(repoRoot(t), "deploy", "nginx", "wymcp.conf")
}

// upstreamKeepalive is the template's upstream keepalive_timeout.
func upstreamKeepalive(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(templatePath(t))
	if err != nil {
		t.Fatal(err)
	}
	m := upstreamKeep.FindSubmatch(b)
	if m == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no keepalive_timeout <N>s; in upstream wymcp")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return time.Duration(n) * time.Second
}

// serverFailTimeout is the fail_timeout of the template's server lines
// (nginx's default, 10 s, when they set none).
func serverFailTimeout(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile(templatePath(t))
	if err != nil {
		t.Fatal(err)
	}
	m := replicasBlock.FindSubmatch(b)
	if m == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no '# e2e:replicas begin' ... '# e2e:replicas end' block")
	}
	if f := failTimeout.FindSubmatch(m[2]); f != nil {
		n, _ := strconv.Atoi(string(f[1]))
		return time.Duration(n) * time.Second
	}
	return 10 * time.Second
}

// renderConfig fills the template in: one server line per replica, with the
// parameters of the template's first server line, and the listen address.
func renderConfig(t *testing.T, addrs []string, listen string) string {
	t.Helper()
	b, err := os.ReadFile(templatePath(t))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	m := replicasBlock.FindStringSubmatch(conf)
	if m == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no '# e2e:replicas begin' ... '# e2e:replicas end' block")
	}
	indent := m[1]
	sm := serverLine.FindStringSubmatch(m[2])
	if sm == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no server line between the replicas markers")
	}
	var lines strings.Builder
	lines.WriteString(indent + "# e2e:replicas begin\n")
	for _, a := range addrs {
		lines.WriteString(indent + "server " + a + sm[2] + ";\n")
	}
	lines.WriteString(indent + "# e2e:replicas end\n")
	conf = strings.Replace(conf, m[0], lines.String(), 1)
	if !listenLine.MatchString(conf) {
		t.Fatal("deploy/nginx/wymcp.conf: no 'listen ...; # e2e:listen' line")
	}
	conf = listenLine.ReplaceAllString(conf, "${1}listen "+listen+";${2}")
	return conf
}

// front is nginx started from a temporary prefix with the rendered config.
type front struct {
	prefix string
	base   string // http://127.0.0.1:port
	p      *proc
}

func startNginx(t *testing.T, s settings, addrs []string) *front {
	t.Helper()
	bin := findNginx(t, s)
	prefix, err := os.MkdirTemp("", "wymcp-e2e-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prefix) })
	// Workers run as another user when the master is root: they must reach
	// the prefix to create their temporary files.
	if err := os.Chmod(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(renderConfig(t, addrs, listen)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-p", prefix, "-e", filepath.Join(prefix, "error.log"), "-c", conf}
	if out, err := exec.Command(bin, append([]string{"-t", "-q"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t rejects the rendered deploy/nginx/wymcp.conf: %v\n%s", err, out)
	}
	p, stdout := startProc(t, "nginx", exec.Command(bin, args...))
	go io.Copy(io.Discard, stdout)
	f := &front{prefix: prefix, base: "http://" + listen, p: p}
	t.Cleanup(func() { f.stop(t, s) })

	// nginx answers its own /healthz; then a call reaches a replica.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p.exited() {
			t.Fatalf("nginx exited: %v\n%s\n%s", p.err, p.logs.String(), f.errorLog())
		}
		resp, err := probeClient.Get(f.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not answer /healthz within 10 s: %v\n%s", err, f.errorLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ok, why := discovered(probeClient, f.base+"/mcp"); !ok {
		t.Fatalf("server/discover through nginx: %s\n%s", why, f.errorLog())
	}
	return f
}

// lost502 sorts the 502s of nginx's access log by what the upstream did:
// a replica's address means the call was sent to it and its connection
// failed (the call is lost); the upstream group's name means that no
// replica could be tried ("no live upstreams").
func (f *front) lost502() map[string]int {
	b, _ := os.ReadFile(filepath.Join(f.prefix, "access.log"))
	out := map[string]int{}
	for line := range strings.Lines(string(b)) {
		if !strings.Contains(line, `HTTP/1.1" 502 `) {
			continue
		}
		up := ""
		if i := strings.Index(line, " upstream="); i >= 0 {
			up, _, _ = strings.Cut(line[i+len(" upstream="):], " ")
		}
		switch {
		case strings.Contains(up, ":"):
			out["sent to a replica, connection closed or reset before the answer"]++
		default:
			out["no live upstreams (every replica marked failed)"]++
		}
	}
	return out
}

func (f *front) errorLog() string {
	b, _ := os.ReadFile(filepath.Join(f.prefix, "error.log"))
	return string(b)
}

// stop ends nginx gracefully (SIGQUIT), keeping its logs in WYMCP_E2E_OUT.
func (f *front) stop(t *testing.T, s settings) {
	if !f.p.exited() {
		_ = f.p.signalAndWait(syscall.SIGQUIT, 5*time.Second)
		f.p.kill()
	}
	if s.out == "" {
		return
	}
	dir := filepath.Join(s.out, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("WYMCP_E2E_OUT: %v", err)
		return
	}
	for _, name := range []string{"nginx.conf", "error.log", "access.log"} {
		if b, err := os.ReadFile(filepath.Join(f.prefix, name)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
	}
}

// errorKinds sums nginx's error log by message, numbers and addresses left
// out: what nginx saw go wrong with the replicas.
func errorKinds(log string) []string {
	counts := map[string]int{}
	digits := regexp.MustCompile(`\d+`)
	for line := range strings.Lines(log) {
		_, msg, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		// "18#18: *123 msg, client: ..." -> "msg"
		if i := strings.Index(msg, ": "); i >= 0 && strings.Contains(msg[:i], "#") {
			msg = msg[i+2:]
		}
		if j := strings.Index(msg, " "); j >= 0 && strings.HasPrefix(msg, "*") {
			msg = msg[j+1:]
		}
		msg, _, _ = strings.Cut(msg, ", client:")
		msg = strings.TrimSpace(msg)
		level := line[strings.Index(line, "[")+1 : strings.Index(line, "]")]
		msg = digits.ReplaceAllStringFunc(msg, func(d string) string {
			// Keep errno values and status codes readable.
			if len(d) <= 3 {
				return d
			}
			return "N"
		})
		counts["["+level+"] "+msg]++
	}
	var out []string
	for k, v := range counts {
		out = append(out, fmt.Sprintf("%6d  %s", v, k))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

// jsonrpcAnswer is the part of an answer the checks read.
type jsonrpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// shortErr names a transport error without its addresses.
func shortErr(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}
