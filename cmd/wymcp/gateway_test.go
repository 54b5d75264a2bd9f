package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The gateway (-upstreams) end to end: upstreams that are wymcp servers on
// loopback, the program in process (or, for SIGHUP, in a child process),
// called over HTTP.

// originInfo is the upstreams' Implementation.
var originInfo = protocol.Implementation{Name: "origin", Version: "1.0.0"}

// serveOrigin serves ts as an upstream MCP server on 127.0.0.1 and returns
// the server (for SetTools) and its URL.
func serveOrigin(t *testing.T, opts *wymcp.Options, ts ...*tools.Tool) (*wymcp.Server, string) {
	t.Helper()
	s, err := wymcp.New(originInfo, opts, ts...)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL + "/mcp"
}

// says is a tool that answers text.
func says(name, text string) *tools.Tool {
	return tools.Must(tools.New(name, "Says "+text+".", func(context.Context, struct{}) (string, error) { return text, nil }))
}

// sleeper is a tool that says it runs on entered, waits until release is
// closed, then says it slept; it honours its context.
func sleeper(name string, entered chan<- struct{}, release <-chan struct{}) *tools.Tool {
	return tools.Must(tools.New(name, "Sleeps.", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}))
}

// upstreamsFile writes the -upstreams file and returns its path.
func upstreamsFile(t *testing.T, path, content string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "upstreams.yaml")
	}
	// Written aside and renamed, as an operator's tool would: a reload
	// never reads half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolNames lists the endpoint's tools, every page.
func toolNames(t *testing.T, ep *mcptest.Endpoint) []string {
	t.Helper()
	var names []string
	cursor := ""
	for {
		params := ""
		if cursor != "" {
			params = `"cursor":` + mcptest.Quote(cursor)
		}
		rep := ep.Send(t, mcptest.Call("tools/list", params))
		res := rep.ExpectResult(t, "1")
		list, _ := res["tools"].([]any)
		for _, tool := range list {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			slices.Sort(names)
			return names
		}
		cursor = next
	}
}

// callText calls a tool through ep and returns its text and isError.
func callText(t *testing.T, ep *mcptest.Endpoint, name, args string) (string, bool) {
	t.Helper()
	rep := ep.Send(t, mcptest.ToolCall(name, args))
	return mcptest.ToolText(t, rep.ExpectResult(t, "1"))
}

// demoNames are the demo set's tools, sorted.
var demoNames = []string{"add", "ask_name", "bad_result", "echo", "fail", "panic", "sleep"}

// TestGateway: the demo set and two upstreams, one without a prefix,
// served side by side; calls reach the right server.
func TestGateway(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("greet", "hello from a"))
	_, b := serveOrigin(t, nil, says("echo", "echo from b"), says("hidden", "no"))
	file := upstreamsFile(t, "", fmt.Sprintf(`
upstreams:
  - name: a
    url: %s
  - name: b
    url: %s
    prefix: b_
    exclude: [hidden]
`, a, b))
	s := start(t, "-upstreams", file)
	want := slices.Sorted(slices.Values(append(slices.Clone(demoNames), "greet", "b_echo")))
	if got := toolNames(t, s.ep); !slices.Equal(got, want) {
		t.Errorf("tools %q, want %q", got, want)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"greet", `{}`, `"hello from a"`},
		{"b_echo", `{}`, `"echo from b"`},
		{"echo", `{"text":"the demo's"}`, `the demo's`},
	} {
		if text, isErr := callText(t, s.ep, c.tool, c.args); text != c.want || isErr {
			t.Errorf("%s: %q (isError %v), want %q", c.tool, text, isErr, c.want)
		}
	}
}

// TestGatewayConflict: a tool whose name is served already (here the
// demo set's echo) is left out and logged, at start and when an upstream
// changes, and the rest is served; it neither fails the start (exit 2, as
// it once did) nor freezes another upstream's changes (issue 40: one
// upstream listing a colliding name kept every other upstream's new tools
// unserved).
func TestGatewayConflict(t *testing.T) {
	t.Parallel()
	originA, a := serveOrigin(t, &wymcp.Options{CacheTTL: 20 * time.Millisecond}, says("greet", "hi"), says("echo", "not the demo's"))
	originB, b := serveOrigin(t, &wymcp.Options{CacheTTL: 20 * time.Millisecond}, says("hello", "b hello"))
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n  - name: b\n    url: "+b+"\n")
	log := &mcptest.SyncBuffer{}
	s := startTo(t, log, "-upstreams", file)
	if !strings.Contains(log.String(), `level=WARN msg="tool left out: its name is served already; give one of them a prefix, exclude or rename it" tool=echo upstream=a served_by="the local tools"`) {
		t.Errorf("the conflict at start is not logged:\n%s", log)
	}
	if text, _ := callText(t, s.ep, "echo", `{"text":"demo"}`); text != "demo" {
		t.Errorf("echo is not the demo's: %q", text)
	}
	// b now lists a's greet (left out), then a adds a tool: served.
	if err := originB.SetTools(says("hello", "b hello"), says("greet", "b greet")); err != nil {
		t.Fatal(err)
	}
	waitLogged(t, log, `tool=greet upstream=b served_by="upstream a"`)
	if err := originA.SetTools(says("greet", "hi"), says("echo", "not the demo's"), says("fresh", "a fresh")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !slices.Contains(toolNames(t, s.ep), "fresh"); {
		if time.Now().After(deadline) {
			t.Fatalf("a's new tool is not served while b's clash lasts: %q\n%s", toolNames(t, s.ep), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct{ tool, want string }{{"greet", `"hi"`}, {"hello", `"b hello"`}, {"fresh", `"a fresh"`}} {
		if text, _ := callText(t, s.ep, c.tool, `{}`); text != c.want {
			t.Errorf("%s: %q, want %q", c.tool, text, c.want)
		}
	}
}

// waitLogged waits until log holds want.
func waitLogged(t *testing.T, log *mcptest.SyncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("not logged: %s\n%s", want, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGatewayToolsNone: -tools none serves the upstreams' tools alone.
func TestGatewayToolsNone(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("echo", "upstream echo"))
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n")
	s := start(t, "-tools", "none", "-upstreams", file)
	if got := toolNames(t, s.ep); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("tools %q, want [echo]", got)
	}
	if text, _ := callText(t, s.ep, "echo", `{}`); text != `"upstream echo"` {
		t.Errorf("echo: %q", text)
	}
}

// TestGatewayUpstreamDownAtStart: an upstream that cannot be reached at
// start costs only its own tools: the gateway serves the others at once
// and is ready, logs the one down, and serves its tools once it answers.
// With nothing else to serve, /readyz is 503 until it does.
func TestGatewayUpstreamDownAtStart(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("echo", "upstream echo"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down, for now
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n    prefix: a_\n  - name: late\n    url: http://"+addr+"/mcp\n    prefix: late_\n    connectTimeout: 2s\n")
	var logs syncBuffer
	s := startTo(t, &logs, "-tools", "none", "-upstreams", file)
	if got := toolNames(t, s.ep); !slices.Equal(got, []string{"a_echo"}) {
		t.Fatalf("tools %q at start, want [a_echo]", got)
	}
	if text, _ := callText(t, s.ep, "a_echo", `{}`); text != `"upstream echo"` {
		t.Errorf("a_echo: %q", text)
	}
	if code := readyz(t, s); code != 200 {
		t.Errorf("/readyz %d with one upstream of two served, want 200", code)
	}
	if !strings.Contains(logs.String(), `msg="upstream not connected; the others are served, and it is tried again in the background" upstream=late`) {
		t.Errorf("the upstream down was not logged:\n%s", logs.String())
	}
	// It comes up: its tools are served within its backoff.
	late, err := wymcp.New(originInfo, nil, says("hello", "late hello"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	hs := &http.Server{Handler: late}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	deadline := time.Now().Add(20 * time.Second)
	for !slices.Equal(toolNames(t, s.ep), []string{"a_echo", "late_hello"}) {
		if time.Now().After(deadline) {
			t.Fatalf("the late upstream's tools were never served; tools %q\n%s", toolNames(t, s.ep), logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if text, _ := callText(t, s.ep, "late_hello", `{}`); text != `"late hello"` {
		t.Errorf("late_hello: %q", text)
	}

	t.Run("nothing else to serve", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()
		file := upstreamsFile(t, "", "upstreams:\n  - name: down\n    url: http://"+closed+"/mcp\n    connectTimeout: 2s\n")
		s := start(t, "-tools", "none", "-upstreams", file)
		if code := readyz(t, s); code != 503 {
			t.Errorf("/readyz %d with no tool served, want 503", code)
		}
		if got := toolNames(t, s.ep); len(got) != 0 {
			t.Errorf("tools %q, want none", got)
		}
	})
}

// readyz returns the status of GET /readyz.
func readyz(t *testing.T, s *server) int {
	t.Helper()
	resp, err := s.ep.HTTP.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// child is the program run as a child process (TestMain), for signals.
type child struct {
	cmd    *exec.Cmd
	ep     *mcptest.Endpoint
	stderr *mcptest.SyncBuffer
	exited chan error
}

// startChild runs main with args in a child process and returns once it
// listens.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(exe), stderr: &mcptest.SyncBuffer{}, exited: make(chan error, 1)}
	c.cmd.Env = append(os.Environ(), "WYMCP_TEST_MAIN=1", "OTEL_SDK_DISABLED=true",
		"WYMCP_TEST_ARGS="+strings.Join(append([]string{"-addr", "127.0.0.1:0", "-drain-delay", "0"}, args...), " "))
	c.cmd.Stderr = c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("the child's log:\n%s", c.stderr)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v; log:\n%s", err, c.stderr)
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		c.exited <- c.cmd.Wait()
	}()
	url := strings.TrimSpace(strings.TrimPrefix(line, "wymcp listening on "))
	pool := &http.Transport{}
	t.Cleanup(pool.CloseIdleConnections)
	c.ep = &mcptest.Endpoint{URL: url, HTTP: &http.Client{Transport: pool}, Info: infoFor(args)}
	return c
}

// waitLog waits until the child has logged want.
func (c *child) waitLog(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.stderr.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("the child has not logged %q in 10 s", want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGatewaySIGHUP: on SIGHUP the file is read again: an upstream added is
// served, one removed is gone, while a call to the removed one that was
// under way is answered; a bad file changes nothing. The real signal, to
// the real program in a child process.
func TestGatewaySIGHUP(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	_, a := serveOrigin(t, nil, says("one", "a one"), sleeper("slow", entered, release))
	_, b := serveOrigin(t, nil, says("two", "b two"))
	_, c := serveOrigin(t, nil, says("three", "c three"))
	file := upstreamsFile(t, "", fmt.Sprintf("upstreams:\n  - {name: a, url: %q, prefix: a.}\n  - {name: b, url: %q}\n", a, b))
	ch := startChild(t, "-tools", "none", "-upstreams", file)
	if got, want := toolNames(t, ch.ep), []string{"a.one", "a.slow", "two"}; !slices.Equal(got, want) {
		t.Fatalf("tools %q, want %q", got, want)
	}

	// A call to a's slow tool is under way when a is removed: it runs at
	// the upstream before the reload and ends after it (not after fixed
	// times, which a loaded machine may outlast).
	slow := make(chan string, 1)
	go func() {
		text, isErr, err := mcptest.CallText(context.Background(), ch.ep.HTTP, ch.ep.URL, "a.slow", 7)
		slow <- fmt.Sprintf("%s %v %v", text, isErr, err)
	}()
	<-entered
	upstreamsFile(t, file, fmt.Sprintf("upstreams:\n  - {name: b, url: %q, prefix: b_}\n  - {name: c, url: %q, prefix: c_}\n", b, c))
	if err := ch.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ch.waitLog(t, "msg=\"upstreams reloaded\"")
	if got, want := toolNames(t, ch.ep), []string{"b_two", "c_three"}; !slices.Equal(got, want) {
		t.Errorf("after the reload: tools %q, want %q", got, want)
	}
	close(release)
	if got := <-slow; got != `"slept" false <nil>` {
		t.Errorf("the call under way to the removed upstream: %s, want it answered", got)
	}
	ch.ep.Send(t, mcptest.ToolCall("a.one", `{}`)).ExpectError(t, 200, -32602, "1")
	if text, isErr := callText(t, ch.ep, "c_three", `{}`); text != `"c three"` || isErr {
		t.Errorf("the added upstream's tool: %q isError %v", text, isErr)
	}
	if text, isErr := callText(t, ch.ep, "b_two", `{}`); text != `"b two"` || isErr {
		t.Errorf("the reconnected upstream's tool: %q isError %v", text, isErr)
	}
	if !strings.Contains(ch.stderr.String(), `added=c reconnected=b removed=a`) {
		t.Errorf("the reload's log line does not say what changed:\n%s", ch.stderr)
	}

	// A bad file: logged, and nothing changes.
	upstreamsFile(t, file, "upstreams:\n  - {name: b, url: 'ftp://b'}\n")
	if err := ch.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ch.waitLog(t, "upstreams not reloaded; serving as before")
	if !strings.Contains(ch.stderr.String(), `err="-upstreams `+file+`:2: upstreams[0].url: \"ftp://b\" is not an http or https URL"`) {
		t.Errorf("the bad file's error is not logged:\n%s", ch.stderr)
	}
	if got, want := toolNames(t, ch.ep), []string{"b_two", "c_three"}; !slices.Equal(got, want) {
		t.Errorf("after a bad file: tools %q, want %q", got, want)
	}

	if err := ch.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ch.exited:
		if err != nil {
			var ee *exec.ExitError
			errors.As(err, &ee)
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10 s after SIGTERM")
	}
}

// TestTrustedProxiesFlag: -trusted-proxies takes CIDRs and addresses,
// comma-separated and repeated; anything else is a usage error naming it.
func TestTrustedProxiesFlag(t *testing.T) {
	t.Parallel()
	c, err := parseFlags([]string{"-trusted-proxies", "127.0.0.1/32, 10.0.0.0/8", "-trusted-proxies", "::1,192.168.1.7/24"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.opts.TrustedProxies {
		got = append(got, p.String())
	}
	if want := []string{"127.0.0.1/32", "10.0.0.0/8", "::1/128", "192.168.1.0/24"}; !slices.Equal(got, want) {
		t.Errorf("TrustedProxies %q, want %q", got, want)
	}
	var stderr strings.Builder
	if _, err := parseFlags([]string{"-trusted-proxies", "nginx"}, &stderr); err == nil || !strings.Contains(stderr.String(), `"nginx" is neither a CIDR nor an address`) {
		t.Errorf("a bad value: %v, %q", err, stderr.String())
	}
}
