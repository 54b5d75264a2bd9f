package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// meta is the params._meta member every 2026-07-28 request carries.
const meta = `"_meta":` + mcptest.Meta

// serverInfo ends every result.
const serverInfo = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"wymcp-demo","version":"0.1.0"}}`

// server is one run of the program, in process.
type server struct {
	url string
	ep  *mcptest.Endpoint
	// pool holds ep's keep-alive connections, this server's alone: a test
	// that makes the server close idle connections empties it.
	pool   *http.Transport
	cancel context.CancelFunc // SIGINT/SIGTERM
	done   chan error         // run's result
	// metricsURL is the scrape URL of the second stdout line, with
	// -metrics-addr.
	metricsURL string
}

// start runs the program on a free port and returns once it is listening.
// The cleanup stops it and checks that it stopped cleanly. The drain is off
// (-drain-delay 0) unless args set it: most tests stop servers that hold
// idle keep-alive connections, which a drain would wait on.
func start(t *testing.T, args ...string) *server {
	t.Helper()
	return startTo(t, t.Output(), args...)
}

// startTo is start with the log written to stderr.
func startTo(t *testing.T, stderr io.Writer, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &server{cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-drain-delay", "0"}, args...), pw, stderr)
		pw.CloseWithError(errors.New("run returned"))
		s.done <- err
	}()
	stdout := bufio.NewReader(pr)
	line, err := stdout.ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("reading the listening line: %v (run: %v)", err, <-s.done)
	}
	if slices.Contains(args, "-metrics-addr") {
		const metricsPrefix = "wymcp metrics on "
		mline, err := stdout.ReadString('\n')
		if !strings.HasPrefix(mline, metricsPrefix) || err != nil {
			cancel()
			t.Fatalf("second stdout line = %q (%v), want %q<url>", mline, err, metricsPrefix)
		}
		s.metricsURL = strings.TrimSuffix(strings.TrimPrefix(mline, metricsPrefix), "\n")
	}
	go io.Copy(io.Discard, stdout) // nothing more is expected; never block run
	const prefix = "wymcp listening on "
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, "/mcp\n") {
		t.Fatalf("listening line = %q, want %q<url>/mcp", line, prefix)
	}
	s.url = strings.TrimSuffix(strings.TrimPrefix(line, prefix), "\n")
	s.pool = &http.Transport{}
	s.ep = &mcptest.Endpoint{URL: s.url, HTTP: &http.Client{Transport: s.pool}, Info: infoFor(args)}
	t.Cleanup(func() {
		s.pool.CloseIdleConnections()
		cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("run returned %v after shutdown, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not return within 10s of shutdown")
		}
	})
	return s
}

// infoFor is the serverInfo a run with args names in its results: -name
// and -version when given, else the name of its -tools set (TestServerName
// asserts each) and the binary's version.
func infoFor(args []string) protocol.Implementation {
	info := protocol.Implementation{Name: "wymcp-demo", Version: version}
	name := ""
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "-tools":
			info.Name = map[string]string{"demo": "wymcp-demo", "conformance": "wymcp-conformance", "none": "wymcp"}[args[i+1]]
		case "-name":
			name = args[i+1]
		case "-version":
			info.Version = args[i+1]
		}
	}
	if name != "" {
		info.Name = name
	}
	return info
}

// post sends body as one JSON-RPC request for method (and tool name) and
// returns the status and the answer as received.
func (s *server) post(t *testing.T, ctx context.Context, method, name, body string) (int, string) {
	t.Helper()
	return s.ep.Post(t, ctx, mcptest.Raw(method, name, body))
}

// callBody is the body of a tools/call of name with args.
func callBody(name, args string) string { return mcptest.ToolCall(name, args).Body }

// TestServe checks the three methods end to end over a real listener,
// byte for byte.
func TestServe(t *testing.T) {
	t.Parallel()
	s := start(t)
	tests := []struct {
		name, method, tool, body, want string
	}{{
		name:   "server/discover",
		method: "server/discover",
		body:   `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		want:   `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":300000,"cacheScope":"public",` + serverInfo + `}}`,
	}, {
		name:   "tools/list",
		method: "tools/list",
		body:   `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`,
		want: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[` +
			`{"name":"echo","description":"Echoes the given text back as one text block.","inputSchema":` + echoSchema + `,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},` +
			`{"name":"add","description":"Adds two numbers and returns the sum as structured content.","inputSchema":{"type":"object","properties":{"a":{"type":"number","description":"First addend"},"b":{"type":"number","description":"Second addend"}},"required":["a","b"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},` +
			`{"name":"sleep","description":"Sleeps for ms milliseconds, reporting progress in tenths, then says so; stops early if the call is cancelled.","inputSchema":` + sleepSchema + `,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},` +
			`{"name":"ask_name","description":"Asks for your name (an elicitation: the client shows a form), then greets you. Needs the client's elicitation capability.","inputSchema":` + noArgsSchema + `,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}},` +
			`{"name":"fail","description":"Always fails: shows a tool error answered as an isError result.","inputSchema":` + noArgsSchema + `,"annotations":{"openWorldHint":false}},` +
			`{"name":"panic","description":"Always panics: shows tool containment (an isError result, the server keeps running).","inputSchema":` + noArgsSchema + `,"annotations":{"openWorldHint":false}},` +
			`{"name":"bad_result","description":"Returns a result that faults while it is encoded: shows supervisor containment (JSON-RPC -32603).","inputSchema":` + noArgsSchema + `,"annotations":{"openWorldHint":false}}` +
			`],"ttlMs":300000,"cacheScope":"public",` + serverInfo + `}}`,
	}, {
		name:   "tools/call echo",
		method: "tools/call",
		tool:   "echo",
		body:   callBody("echo", `{"text":"hello"}`),
		want:   `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete",` + serverInfo + `}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, got := s.post(t, t.Context(), tt.method, tt.tool, tt.body)
			if status != http.StatusOK {
				t.Errorf("status = %d, want 200", status)
			}
			if got != tt.want {
				t.Errorf("body:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestDemoTools calls each demo tool once: each shows one docs/design.md
// §5 row.
func TestDemoTools(t *testing.T) {
	t.Parallel()
	s := start(t)
	result := func(content string, isError bool) string {
		e := ""
		if isError {
			e = `"isError":true,`
		}
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[` + content + `],` + e + `"resultType":"complete",` + serverInfo + `}}`
	}
	tests := []struct {
		name, tool, args, want, explanation string
	}{
		{"add", "add", `{"a":2,"b":3.5}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"sum\":5.5}"}],"structuredContent":{"sum":5.5},"resultType":"complete",` + serverInfo + `}}`,
			"a typed tool: structuredContent plus the same JSON as text"},
		{"sleep", "sleep", `{"ms":1}`, result(`{"type":"text","text":"slept 1 ms"}`, false), "a raw tool"},
		{"sleep out of range", "sleep", `{"ms":50001}`,
			result(`{"type":"text","text":"Invalid arguments for tool sleep: at '/ms': got 50001, want at most 50000"}`, true),
			"arguments fail the input schema: isError result"},
		{"fail", "fail", `{}`, result(`{"type":"text","text":"this tool always fails"}`, true), "tool returns an error: isError result"},
		{"panic", "panic", `{}`, result(`{"type":"text","text":"Tool execution failed: internal error"}`, true), "tool panics: tool containment, fixed text"},
		{"bad_result", "bad_result", `{}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`,
			"fault past the tool: supervisor containment, -32603 with the id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, got := s.post(t, t.Context(), "tools/call", tt.tool, callBody(tt.tool, tt.args))
			if status != http.StatusOK {
				t.Errorf("%s: status = %d, want 200", tt.explanation, status)
			}
			if got != tt.want {
				t.Errorf("%s: body:\n got %s\nwant %s", tt.explanation, got, tt.want)
			}
		})
	}
	// The server survived both faults.
	if status, got := s.post(t, t.Context(), "tools/call", "echo", callBody("echo", `{"text":"still here"}`)); status != 200 || !strings.Contains(got, `"text":"still here"`) {
		t.Errorf("after the faults: %d %s", status, got)
	}
}

// TestToolsDescribed checks that every tool of every page of tools/list has
// a description and an object input schema (docs/design.md §6).
func TestToolsDescribed(t *testing.T) {
	t.Parallel()
	s := start(t)
	cursor, seen := "", 0
	for {
		params := meta
		if cursor != "" {
			params = `"cursor":` + strings.TrimSpace(mustJSON(t, cursor)) + `,` + meta
		}
		status, body := s.post(t, t.Context(), "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+params+`}}`)
		if status != http.StatusOK {
			t.Fatalf("status = %d, body %s", status, body)
		}
		var resp struct {
			Result struct {
				Tools []struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("decoding %s: %v", body, err)
		}
		for _, tool := range resp.Result.Tools {
			seen++
			if tool.Description == "" {
				t.Errorf("tool %q has no description", tool.Name)
			}
			var schema struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" {
				t.Errorf("tool %q: inputSchema %s is not an object schema (%v)", tool.Name, tool.InputSchema, err)
			}
		}
		if cursor = resp.Result.NextCursor; cursor == "" {
			break
		}
	}
	ts, err := demoTools()
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(ts) {
		t.Errorf("tools/list showed %d tools, want %d", seen, len(ts))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestShutdownAnswersInFlight is SIGTERM during a call: the call in flight
// is answered, then run returns nil.
func TestShutdownAnswersInFlight(t *testing.T) {
	t.Parallel()
	s := start(t)
	wrote := make(chan struct{})
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) },
	})
	type answer struct {
		status int
		body   string
	}
	answered := make(chan answer, 1)
	go func() {
		status, body := s.post(t, ctx, "tools/call", "sleep", callBody("sleep", `{"ms":500}`))
		answered <- answer{status, body}
	}()
	<-wrote
	// Give the server a moment to accept the connection and start the call;
	// the tool sleeps well past this.
	time.Sleep(100 * time.Millisecond)
	s.cancel()
	a := <-answered
	if a.status != http.StatusOK || !strings.Contains(a.body, `"text":"slept 500 ms"`) {
		t.Errorf("call in flight at shutdown: %d %s, want 200 and slept 500 ms", a.status, a.body)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("run = %v, want nil", err)
		}
		s.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after shutdown")
	}
}

// TestUsage checks the command-line errors: exit status 2 and a message
// naming what is wrong.
func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"unknown tool set", []string{"-tools", "nope"}, 2, `unknown tool set "nope"; known sets: conformance, demo, none`},
		{"unknown flag", []string{"-bogus"}, 2, "flag provided but not defined: -bogus"},
		{"stray argument", []string{"serve"}, 2, "unexpected arguments"},
		{"bad path", []string{"-path", "mcp"}, 2, "must start with /"},
		{"negative state TTL", []string{"-state-ttl", "-1s"}, 2, "-state-ttl -1s must not be negative"},
		{"missing key file", []string{"-state-key-file", "/nonexistent/keys"}, 2, "-state-key-file: open /nonexistent/keys: no such file or directory"},
		{"short key", []string{"-state-key-file", keyFile(t, "# ring\n"+b64(32)+"\n\n"+b64(16)+"\n")}, 2, "the key on line 4 is 16 bytes; each key must be 32 bytes (AES-256)"},
		{"long key", []string{"-state-key-file", keyFile(t, b64(33))}, 2, "the key on line 1 is 33 bytes"},
		{"not base64", []string{"-state-key-file", keyFile(t, "not a key!\n")}, 2, "line 1 is not standard base64"},
		{"unpadded base64", []string{"-state-key-file", keyFile(t, strings.TrimRight(b64(32), "="))}, 2, "line 1 is not standard base64"},
		{"no key", []string{"-state-key-file", keyFile(t, "# only a comment\n\n")}, 2, "no key in the file"},
		{"same key twice", []string{"-state-key-file", keyFile(t, b64(32)+"\n"+b64(32)+"\n")}, 2, "line 2 repeats the key of line 1"},
		{"help", []string{"-h"}, 0, "Usage: wymcp [flags]\n"},
		{"log format", []string{"-log-format", "xml"}, 2, `wymcp: -log-format "xml": want text or json` + "\n"},
		{"metrics address", []string{"-metrics-addr", "9464"}, 2, `wymcp: -metrics-addr "9464": want host:port` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tt.args...), &stdout, &stderr)
			if code := exitCode(err, &stderr); code != tt.want {
				t.Errorf("exit code = %d (err %v), want %d", code, err, tt.want)
			}
			if !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.msg)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// b64 is the base64 of n bytes counting up: a key of n bytes.
func b64(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// keyFile writes content to a file of the test and returns its path.
func keyFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state-keys")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHelp: -h prints the usage, the environment variables included (the
// only way to configure telemetry), and exits 0.
func TestHelp(t *testing.T) {
	t.Parallel()
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"-h"}, &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 0 {
		t.Errorf("exit code = %d (err %v), want 0", code, err)
	}
	help := stderr.String()
	if !strings.HasPrefix(help, usageHead) || !strings.HasSuffix(help, usageEnv) {
		t.Errorf("-h does not start with the head and end with the environment:\n%s", help)
	}
	for _, want := range []string{
		"\n  -allow-host host\n",
		"\n  -log-format format\n",
		"\n  -metrics-addr host:port\n",
		"\n  WYMCP_ADDR\n",
		"\n  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT\n",
		"\n  OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL\n",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("-h lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, " value\n") {
		t.Errorf("-h has a flag with the generic placeholder \"value\":\n%s", help)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
}

// TestAddrFromEnv: without -addr the listener is $WYMCP_ADDR (the
// container image's way, which its health check reads too).
func TestAddrFromEnv(t *testing.T) {
	t.Setenv(envAddr, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-drain-delay", "0"}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	if !strings.HasPrefix(line, "wymcp listening on http://127.0.0.1:") || strings.HasPrefix(line, "wymcp listening on http://127.0.0.1:8080/") {
		t.Errorf("listening line %q, want a free port on 127.0.0.1 from %s", line, envAddr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
}
