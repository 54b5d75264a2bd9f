package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/internal/toolrun"
)

// The stop of drain.go, against the real program on a real listener:
// health endpoints, the two listener modes, the drain's answers, and the
// second signal.

// TestMain lets TestSecondSignal run main itself in a child process (the
// test binary re-executed), since only main installs the signal handling.
func TestMain(m *testing.M) {
	if os.Getenv("WYMCP_TEST_MAIN") == "1" {
		os.Args = append([]string{"wymcp"}, strings.Fields(os.Getenv("WYMCP_TEST_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// conn is one raw keep-alive connection to the server.
type conn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, host string) *conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", host, err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, br: bufio.NewReader(c)}
}

// do sends a raw request and reads its answer, whole.
func (c *conn) do(raw string) (*http.Response, string) {
	c.t.Helper()
	_ = c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c.c, raw); err != nil {
		c.t.Fatalf("writing: %v", err)
	}
	method, _, _ := strings.Cut(raw, " ")
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("reading the answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading the body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// closedByServer reports whether the server closed the connection (EOF
// without another answer), waiting as long as a loaded machine may take.
func (c *conn) closedByServer() bool {
	_ = c.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := c.br.ReadByte()
	return errors.Is(err, io.EOF)
}

func getRaw(host, path, hostHeader string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: " + hostHeader + "\r\n\r\n"
}

// TestHealthEndpoints: /healthz and /readyz answer GET (and HEAD) outside
// the MCP path: a kubelet's Host (the pod's address), which the MCP
// endpoint refuses on a loopback listener, is fine; other verbs are 405.
func TestHealthEndpoints(t *testing.T) {
	t.Parallel()
	s := start(t)
	host := s.ep.HostPort()
	c := dial(t, host)
	for _, tc := range []struct {
		name, raw string
		status    int
		body      string
	}{
		{"healthz", getRaw(host, "/healthz", host), 200, "ok\n"},
		{"readyz", getRaw(host, "/readyz", host), 200, "ready\n"},
		{"healthz with a kubelet's Host", getRaw(host, "/healthz", "10.1.2.3:8080"), 200, "ok\n"},
		{"readyz with a kubelet's Host", getRaw(host, "/readyz", "10.1.2.3:8080"), 200, "ready\n"},
		{"HEAD readyz", "HEAD /readyz HTTP/1.1\r\nHost: " + host + "\r\n\r\n", 200, ""},
		{"POST healthz", "POST /healthz HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n", 405, ""},
		{"unknown path", getRaw(host, "/nope", host), 404, ""},
		{"the MCP endpoint refuses that Host", strings.Replace(rawRequest(host, "server/discover", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`), "Host: "+host, "Host: 10.1.2.3:8080", 1), 403, ""},
	} {
		resp, body := c.do(tc.raw)
		if resp.StatusCode != tc.status || (tc.body != "" && body != tc.body) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, body, tc.status, tc.body)
		}
		if resp.Close {
			t.Errorf("%s: Connection: close before any drain", tc.name)
		}
	}
}

// TestDrainRefusesNewConnections: by default, from SIGTERM on, new
// connections are refused at once, while the connections in hand are
// served, each for one more request answered with Connection: close
// (readiness 503 included), and a call in flight is answered. Once no
// connection is left the drain ends, before -drain-delay.
func TestDrainRefusesNewConnections(t *testing.T) {
	t.Parallel()
	const delay = 20 * time.Second
	s := start(t, "-drain-delay", delay.String())
	host := s.ep.HostPort()
	idle := dial(t, host)
	if resp, _ := idle.do(getRaw(host, "/readyz", host)); resp.StatusCode != 200 {
		t.Fatalf("readyz before the drain: %d", resp.StatusCode)
	}
	busy := dial(t, host)
	_ = busy.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(busy.c, rawRequest(host, "tools/call", "sleep", callBody("sleep", `{"ms":1500}`))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the call is running

	signalled := time.Now()
	s.cancel()
	refused := false
	// Bounded by time, not tries: a loaded machine may take a while to
	// run the drain's first step.
	for until := time.Now().Add(10 * time.Second); time.Now().Before(until); {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			// Refused, or reset if the dial landed in the instant the
			// listener closed (listener_linux.go): either way before any
			// request was sent, which a proxy resends elsewhere.
			if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("dial during the drain: %v, want connection refused", err)
			}
			refused = true
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if !refused {
		t.Fatal("new connections still accepted 10 s after SIGTERM")
	}

	resp, body := idle.do(getRaw(host, "/readyz", host))
	if resp.StatusCode != 503 || body != "draining\n" || !resp.Close {
		t.Errorf("readyz on a kept connection during the drain: %d %q close=%v, want 503 draining, close", resp.StatusCode, body, resp.Close)
	}
	if !idle.closedByServer() {
		t.Error("the server kept the connection open after answering with Connection: close")
	}

	resp, err := http.ReadResponse(busy.br, nil)
	if err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"text":"slept 1500 ms"`) || !resp.Close {
		t.Errorf("the call in flight: %d %s close=%v, want 200, slept 1500 ms, close", resp.StatusCode, b, resp.Close)
	}

	select {
	case err := <-s.done:
		s.done <- err // for start's cleanup
		if err != nil {
			t.Fatalf("run = %v", err)
		}
		if took := time.Since(signalled); took >= delay {
			t.Errorf("the drain lasted %v with no connection left, want it to end before -drain-delay %v", took, delay)
		}
	case <-time.After(delay):
		t.Fatal("run still draining with no connection left")
	}
}

// TestDrainAccepts: with -drain-accept, new connections are accepted and
// served during -drain-delay (each answer closing its connection), and
// refused after it.
func TestDrainAccepts(t *testing.T) {
	t.Parallel()
	// Long enough for a loaded machine's three exchanges to fall within it.
	const delay = 5 * time.Second
	s := start(t, "-drain-delay", delay.String(), "-drain-accept")
	host := s.ep.HostPort()
	signalled := time.Now()
	s.cancel()
	time.Sleep(200 * time.Millisecond)

	c := dial(t, host)
	resp, body := c.do(rawRequest(host, "tools/call", "echo", callBody("echo", `{"text":"draining"}`)))
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"draining"`) || !resp.Close {
		t.Errorf("a call on a new connection during the drain: %d %s close=%v, want 200 and close", resp.StatusCode, body, resp.Close)
	}
	resp, body = dial(t, host).do(getRaw(host, "/readyz", host))
	if resp.StatusCode != 503 || body != "draining\n" || !resp.Close {
		t.Errorf("readyz during the drain: %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	resp, _ = dial(t, host).do(getRaw(host, "/healthz", host))
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("healthz during the drain: %d close=%v, want 200 (alive) and close", resp.StatusCode, resp.Close)
	}

	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Fatalf("run = %v", err)
		}
		if took := time.Since(signalled); took < delay {
			t.Errorf("run returned %v after SIGTERM, before -drain-delay %v", took, delay)
		}
	case <-time.After(delay + 10*time.Second):
		t.Fatal("run did not return after the drain")
	}
	if _, err := net.DialTimeout("tcp", host, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after the drain: %v, want connection refused", err)
	}
}

// TestDrainWaitsForIdleConnections: a keep-alive connection that its peer
// keeps idle through the drain is closed only after -drain-delay (the peer
// had that long to close it or send one more request), and a request sent
// on it just before is answered, not dropped.
func TestDrainWaitsForIdleConnections(t *testing.T) {
	t.Parallel()
	// The late call is sent 2 s before the drain's end: room for a loaded
	// machine to oversleep and still send it within the drain.
	const delay = 3 * time.Second
	s := start(t, "-drain-delay", delay.String())
	host := s.ep.HostPort()
	late := dial(t, host)
	if resp, _ := late.do(getRaw(host, "/healthz", host)); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	silent := dial(t, host)
	if resp, _ := silent.do(getRaw(host, "/healthz", host)); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	signalled := time.Now()
	s.cancel()
	time.Sleep(delay - 2*time.Second)
	resp, body := late.do(rawRequest(host, "tools/call", "echo", callBody("echo", `{"text":"just in time"}`)))
	if resp.StatusCode != 200 || !strings.Contains(body, "just in time") || !resp.Close {
		t.Errorf("a call on a kept connection near the end of the drain: %d %s close=%v", resp.StatusCode, body, resp.Close)
	}
	if !silent.closedByServer() {
		t.Error("the silent connection was not closed")
	}
	if took := time.Since(signalled); took < delay {
		t.Errorf("the silent connection was closed %v after SIGTERM, before -drain-delay %v", took, delay)
	}
	if err := <-s.done; err != nil {
		t.Errorf("run = %v", err)
	}
	s.done <- nil
}

// TestSecondSignal: a second SIGTERM during the drain ends the process at
// once (main restores the default handling after the first).
func TestSecondSignal(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "WYMCP_TEST_MAIN=1", "OTEL_SDK_DISABLED=true",
		"WYMCP_TEST_ARGS=-addr 127.0.0.1:0 -drain-accept -drain-delay 60s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = t.Output()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v", err)
	}
	go func() { exited <- cmd.Wait() }()
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "wymcp listening on "), "/mcp")

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 503 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not draining 30 s after SIGTERM: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("exit after the second SIGTERM: %v, want killed by SIGTERM", err)
		}
		t.Logf("exited %v after the second SIGTERM (drain delay 60s)", time.Since(second).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30 s after the second SIGTERM, in a 60 s drain")
	}
}

// TestDrainFlags checks the drain's command-line errors.
func TestDrainFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-drain-delay", "-1s"}, "-drain-delay -1s must not be negative"},
		{[]string{"-shutdown-timeout", "0"}, "-shutdown-timeout 0s must be positive"},
		{[]string{"-path", "/readyz"}, `-path "/readyz" is taken by a health endpoint`},
		{[]string{"-path", "/healthz"}, `-path "/healthz" is taken by a health endpoint`},
	} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tc.args...), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.msg)
		}
	}
	var stdout, stderr strings.Builder
	_ = run(t.Context(), []string{"-h"}, &stdout, &stderr)
	for _, flag := range []string{"-drain-delay", "-drain-accept", "-shutdown-timeout"} {
		if !strings.Contains(stderr.String(), "  "+flag+" ") && !strings.Contains(stderr.String(), "  "+flag+"\n") {
			t.Errorf("-h does not list %s", flag)
		}
	}
	if !strings.Contains(stderr.String(), "(default 5s)") || !strings.Contains(stderr.String(), "(default 1m5s)") {
		t.Errorf("-h does not give the drain's defaults (5s, 1m5s):\n%s", stderr.String())
	}
}

// cutText is the whole text of the answer to a call cut short at
// -shutdown-timeout (drain.go).
const cutText = "The call was cut short: the server is shutting down"

// TestShutdownCutsCallsPastTimeout is the shutdown cut (docs/design.md
// §6a): calls that outlive -shutdown-timeout are answered, not cut off —
// 200 with the id and an isError result saying the server is shutting
// down, as the JSON body or as the last event of the call's progress
// stream — and run returns nil (exit 0), since every call admitted was
// answered.
func TestShutdownCutsCallsPastTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	s := start(t, "-shutdown-timeout", timeout.String())
	replied := make(chan mcptest.Reply, 1)
	go func() { replied <- s.ep.Send(t, mcptest.ToolCall("sleep", `{"ms":20000}`).WithID(7)) }()
	type stream struct {
		resp *http.Response
		msgs []json.RawMessage
	}
	streamed := make(chan stream, 1)
	go func() {
		r := mcptest.ToolCall("sleep", `{"ms":20000}`).WithID(8)
		r.Body = strings.Replace(r.Body, `"_meta":{`, `"_meta":{"progressToken":"p",`, 1)
		resp, msgs := s.ep.SendSSE(t, r)
		streamed <- stream{resp, msgs}
	}()
	time.Sleep(300 * time.Millisecond) // both calls are sleeping

	signalled := time.Now()
	s.cancel()
	var rep mcptest.Reply
	select {
	case rep = <-replied:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the JSON call 10 s after SIGTERM")
	}
	res := rep.ExpectResult(t, "7")
	if text, isErr := mcptest.ToolText(t, res); !isErr || text != cutText {
		t.Errorf("the JSON call: %q isError %v, want %q isError true", text, isErr, cutText)
	}
	if took := time.Since(signalled); took < timeout {
		t.Errorf("answered %v after SIGTERM, before -shutdown-timeout %v", took, timeout)
	}

	var st stream
	select {
	case st = <-streamed:
	case <-time.After(10 * time.Second):
		t.Fatal("the streamed call's stream did not end 10 s after SIGTERM")
	}
	if st.resp.StatusCode != 200 || st.resp.Header.Get("Content-Type") != "text/event-stream" || len(st.msgs) < 2 {
		t.Fatalf("the streamed call: %d %q, %d events, want 200, text/event-stream, progress then the answer", st.resp.StatusCode, st.resp.Header.Get("Content-Type"), len(st.msgs))
	}
	for _, m := range st.msgs[:len(st.msgs)-1] {
		if !strings.Contains(string(m), `"method":"notifications/progress"`) {
			t.Errorf("event before the answer: %s, want a progress notification", m)
		}
	}
	last := st.msgs[len(st.msgs)-1]
	var msg mcptest.Message
	if err := json.Unmarshal(last, &msg); err != nil {
		t.Fatal(err)
	}
	sse := mcptest.Reply{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Raw: last, Msg: msg, Info: s.ep.Info}
	if text, isErr := mcptest.ToolText(t, sse.ExpectResult(t, "8")); !isErr || text != cutText {
		t.Errorf("the streamed call's answer: %q isError %v, want %q isError true", text, isErr, cutText)
	}

	select {
	case err := <-s.done:
		s.done <- nil // for start's cleanup
		if err != nil {
			t.Errorf("run = %v, want nil (exit 0): every call was answered", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the calls were cut")
	}
}

// TestDemoDeadlinesFitShutdown: every demo tool's deadline, with the
// watchdog's second of grace, ends within the default -shutdown-timeout,
// so that a stop with default flags answers every demo call with its own
// answer rather than cutting it short.
func TestDemoDeadlinesFitShutdown(t *testing.T) {
	t.Parallel()
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := demoTools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range ts {
		if d := toolrun.Of(tool).Deadline() + time.Second; d > c.shutdownTimeout {
			t.Errorf("tool %s: deadline %v plus 1 s grace exceeds the default -shutdown-timeout %v", tool.Name(), toolrun.Of(tool).Deadline(), c.shutdownTimeout)
		}
	}
}
