package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// envRun turns the package's tests on.
const envRun = "WYMCP_E2E_GATEWAY"

// TestMain runs nothing without WYMCP_E2E_GATEWAY=1, and says so on one
// line: go test shows it with -v or in the package's directory, and its
// summary line reads "ok … [no tests to run]", not a bare "ok" that passes
// for a run against the real upstreams.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(envRun) != "1" {
		fmt.Println("interop/gateway: skipped: set " + envRun + "=1 to run against real upstream MCP servers (interop/gateway/run.sh installs them)")
		_ = flag.Set("test.run", "^$")
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// The binaries are built once for the package's tests: cmd/wymcp from the
// repository's root, and the two Go upstreams of this module.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func bin(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "wymcp-gateway-e2e-")
		if buildErr != nil {
			return
		}
		root, err := filepath.Abs("../..")
		if err != nil {
			buildErr = err
			return
		}
		begin := time.Now()
		for _, b := range []struct{ dir, out string }{
			{root, "wymcp"}, {".", "sdkserver"}, {".", "mgoserver"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), "./cmd/"+b.out)
			cmd.Dir = b.dir
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build ./cmd/%s: %v\n%s", b.out, err, out)
				return
			}
		}
		t.Logf("built cmd/wymcp, cmd/sdkserver and cmd/mgoserver in %v", time.Since(begin).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// proc is a child process of the test: a server that prints a line saying
// where it listens.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *mcptest.SyncBuffer // stdout and stderr, for failure reports
	done chan struct{}
}

// start runs argv (with env added) and waits for a line of its output that
// starts with ready; it returns the process and the rest of that line. The
// process is stopped when the test ends, and its output logged if the test
// failed.
func start(t *testing.T, name, ready string, env []string, argv ...string) (*proc, string) {
	t.Helper()
	p := &proc{name: name, out: &mcptest.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.out, line)
			if rest, ok := strings.CutPrefix(line, ready); ok && !found {
				found = true
				got <- rest
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		close(got)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s (pid %d) output, last 60 lines:\n%s", name, p.cmd.Process.Pid, tail(p.out.String(), 60))
		}
	})
	select {
	case rest, ok := <-got:
		if !ok {
			t.Fatalf("%s exited before it listened:\n%s", name, p.out.String())
		}
		return p, strings.TrimSpace(rest)
	case <-time.After(3 * time.Minute): // a first npm ci included
		t.Fatalf("%s printed no %q line in 3 minutes:\n%s", name, ready, p.out.String())
	}
	return nil, ""
}

// waitFor waits up to 30 seconds (a loaded machine's while) for the
// process to write a line that contains s.
func (p *proc) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.out.String(), s); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s wrote no line with %q:\n%s", p.name, s, p.out.String())
		}
	}
}

// stop ends the process with SIGTERM, then SIGKILL after 5 seconds.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process with SIGKILL and waits for it to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startEverything starts @modelcontextprotocol/server-everything on a free
// loopback port and returns its MCP endpoint.
func startEverything(t *testing.T) (*proc, string) {
	t.Helper()
	script, err := filepath.Abs("start-everything.sh")
	if err != nil {
		t.Fatal(err)
	}
	p, addr := start(t, "server-everything", "interop-gateway: listening on ", []string{"PORT=0"}, "bash", script)
	return p, "http://" + addr + "/mcp"
}

// startGo starts one of this module's Go upstreams (sdkserver, mgoserver)
// on addr ("127.0.0.1:0" for a free port) and returns its MCP endpoint.
func startGo(t *testing.T, name, addr string, args ...string) (*proc, string) {
	t.Helper()
	p, url := start(t, name, "listening on ", nil, append([]string{bin(t, name), "-addr", addr}, args...)...)
	return p, url
}

// startGateway runs cmd/wymcp -tools none -upstreams with the YAML given,
// written to dir, and more flags; it returns the gateway's endpoint.
func startGateway(t *testing.T, dir, yaml string, flags ...string) (*proc, string) {
	t.Helper()
	file := filepath.Join(dir, "upstreams.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := append([]string{bin(t, "wymcp"), "-addr", "127.0.0.1:0", "-tools", "none", "-upstreams", file,
		"-drain-delay", "0", "-shutdown-timeout", "5s"}, flags...)
	return start(t, "wymcp", "wymcp listening on ", []string{"OTEL_SDK_DISABLED=true"}, argv...)
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// message is one JSON-RPC message of an answer.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// answer is what the gateway answered one request: the HTTP status, and
// the JSON-RPC messages of its body (one for application/json, each
// event's for text/event-stream, none for another type).
type answer struct {
	Status   int
	Header   http.Header
	Messages []message
	Raw      []byte
}

// responses are the answer's messages that answer a request (an id, and a
// result or an error), as opposed to notifications.
func (a *answer) responses() []message {
	var rs []message
	for _, m := range a.Messages {
		if m.Method == "" && (m.Result != nil || m.Error != nil) {
			rs = append(rs, m)
		}
	}
	return rs
}

// toolResult is a tools/call result as far as the tests read it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// text is the result's one text block, and whether it is an error.
func (a *answer) text() (text string, isError bool, err error) {
	rs := a.responses()
	if len(rs) != 1 {
		return "", false, fmt.Errorf("%d responses in %s", len(rs), a.Raw)
	}
	if rs[0].Error != nil {
		return "", false, fmt.Errorf("JSON-RPC error %d %q", rs[0].Error.Code, rs[0].Error.Message)
	}
	var r toolResult
	if err := json.Unmarshal(rs[0].Result, &r); err != nil {
		return "", false, err
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return "", false, fmt.Errorf("content is not one text block: %s", rs[0].Result)
	}
	return r.Content[0].Text, r.IsError, nil
}

// post sends rpc (a 2026-07-28 request, mcptest's) with id to url, with a
// bearer token when not "", and reads the whole answer.
func post(ctx context.Context, hc *http.Client, url string, rpc mcptest.RPC, id int, bearer string) (*answer, error) {
	rpc = rpc.WithID(id)
	if bearer != "" {
		rpc = rpc.With("Authorization", "Bearer "+bearer)
	}
	req, err := rpc.Request(ctx, url)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	a := &answer{Status: resp.StatusCode, Header: resp.Header, Raw: body}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case len(bytes.TrimSpace(body)) == 0:
	case ct == "text/event-stream":
		for _, event := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
			var data []string
			for _, line := range strings.Split(event, "\n") {
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					data = append(data, strings.TrimPrefix(v, " "))
				}
			}
			if len(data) == 0 || strings.TrimSpace(strings.Join(data, "")) == "" {
				continue
			}
			var m message
			if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &m); err != nil {
				return a, fmt.Errorf("event %q: %v", event, err)
			}
			a.Messages = append(a.Messages, m)
		}
	case ct == "application/json":
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			return a, fmt.Errorf("body %q: %v", body, err)
		}
		a.Messages = append(a.Messages, m)
	}
	return a, nil
}

// call is post of a tools/call of name with arguments, which must be
// answered 200 with one response of the request's id.
func call(t *testing.T, ctx context.Context, url, name, arguments, bearer string) *answer {
	t.Helper()
	a, err := post(ctx, http.DefaultClient, url, mcptest.ToolCall(name, arguments), 7, bearer)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if a.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", name, a.Status, a.Raw)
	}
	rs := a.responses()
	if len(rs) != 1 || string(rs[0].ID) != "7" {
		t.Fatalf("%s: want one response of id 7, got %s", name, a.Raw)
	}
	return a
}

// callText calls name and returns its one text block and isError.
func callText(t *testing.T, ctx context.Context, url, name, arguments, bearer string) (string, bool) {
	t.Helper()
	text, isError, err := call(t, ctx, url, name, arguments, bearer).text()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text, isError
}
