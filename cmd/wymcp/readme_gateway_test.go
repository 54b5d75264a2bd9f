package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestREADMEGateway runs the README's gateway commands as written, from
// the repository root (each `go run ./cmd/wymcp` is this binary's run):
// the upstream on its fixed loopback port, then the gateway on
// deploy/gateway.yaml; tools/list through the gateway lists the upstream's
// tools under the file's prefix, and a call of one is answered. Then
// deploy/README.md's gateway command, with -versions, serves a 2025-11-25
// client in its default mode (initialize, then tools/list) that the
// README's gateway answers -32022. The gateway's address comes from
// WYMCP_ADDR (a free port): the commands name none, and 127.0.0.1:8080 may
// be another test's.
func TestREADMEGateway(t *testing.T) {
	t.Chdir("../..")
	t.Setenv(envAddr, "127.0.0.1:0")
	cmds := shCommands(t, "README.md", "-upstreams deploy/gateway.yaml")
	if len(cmds) != 2 || slices.Contains(cmds[0], "-upstreams") || !slices.Contains(cmds[1], "-upstreams") {
		t.Fatalf("README.md's gateway block = %q, want two commands: the upstream, then the gateway", cmds)
	}
	upstream := runAsWritten(t, cmds[0])
	gateway := runAsWritten(t, cmds[1])

	var want []string
	for _, name := range listedNames(t, upstream) {
		want = append(want, "demo_"+name)
	}
	got := listedNames(t, gateway)
	slices.Sort(want)
	slices.Sort(got)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("tools/list through the gateway = %q, want the upstream's under demo_: %q", got, want)
	}
	res := gateway.Send(t, mcptest.ToolCall("demo_echo", `{"text":"through the gateway"}`)).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); text != "through the gateway" || isErr {
		t.Errorf("demo_echo through the gateway = %q (isError %v), want the text echoed", text, isErr)
	}

	// A 2025-era client in its default mode: refused by the README's
	// gateway (2026-07-28 alone), served by deploy/README.md's.
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	legacy := func(body string, version string) mcptest.RPC {
		return mcptest.RPC{Body: body, Headers: map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": ""}}
	}
	gateway.Send(t, legacy(initialize, "")).ExpectError(t, http.StatusBadRequest, -32022, "1")

	vcmds := shCommands(t, "deploy/README.md", "-upstreams deploy/gateway.yaml")
	if len(vcmds) != 1 || !slices.Contains(vcmds[0], "-versions") {
		t.Fatalf("deploy/README.md's gateway block = %q, want one command with -versions", vcmds)
	}
	v := runAsWritten(t, vcmds[0])
	rep := v.Send(t, legacy(initialize, ""))
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if rep.Status != http.StatusOK || rep.Msg.Error != nil || json.Unmarshal(rep.Msg.Result, &init) != nil || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize through the gateway with -versions: %d %s, want 200 and protocolVersion 2025-11-25", rep.Status, rep.Raw)
	}
	rep = v.Send(t, legacy(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2025-11-25"))
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if rep.Status != http.StatusOK || rep.Msg.Error != nil || json.Unmarshal(rep.Msg.Result, &list) != nil || len(list.Tools) != len(want) {
		t.Fatalf("a 2025-11-25 tools/list through the gateway: %d %s, want 200 and %d tools", rep.Status, rep.Raw, len(want))
	}
}

// shCommands returns the `go run ./cmd/wymcp` commands of the ```sh
// block of file that holds marker, each as its arguments (a trailing
// # comment left out).
func shCommands(t *testing.T, file, marker string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run ./cmd/wymcp"
	var block []string
	inSh := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case !inSh && line == "```sh":
			inSh, block = true, nil
		case inSh && line == "```":
			inSh = false
			if strings.Contains(strings.Join(block, "\n"), marker) {
				var cmds [][]string
				for _, l := range block {
					l, _, _ = strings.Cut(l, " #")
					if rest, ok := strings.CutPrefix(l, prefix); ok {
						cmds = append(cmds, strings.Fields(rest))
					}
				}
				return cmds
			}
		case inSh:
			block = append(block, line)
		}
	}
	t.Fatalf("%s has no ```sh block with %q", file, marker)
	return nil
}

// runAsWritten runs the binary with args until the test ends, and returns
// its endpoint once it listens. A port the command names that is taken
// skips the test: another program's, not this one's failure.
func runAsWritten(t *testing.T, args []string) *mcptest.Endpoint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, t.Output())
		pw.CloseWithError(errors.New("run returned"))
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		runErr := <-done
		if errors.Is(runErr, syscall.EADDRINUSE) {
			t.Skipf("wymcp %s: %v", strings.Join(args, " "), runErr)
		}
		t.Fatalf("wymcp %s did not start: %v", strings.Join(args, " "), runErr)
	}
	go io.Copy(io.Discard, pr)
	const listening = "wymcp listening on "
	if !strings.HasPrefix(line, listening) {
		cancel()
		t.Fatalf("wymcp %s: first line %q, want %q<url>", strings.Join(args, " "), line, listening)
	}
	pool := &http.Transport{}
	t.Cleanup(func() {
		pool.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("wymcp %s returned %v after its stop, want nil", strings.Join(args, " "), err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("wymcp %s did not return within 30s of its stop", strings.Join(args, " "))
		}
	})
	return &mcptest.Endpoint{
		URL:  strings.TrimSuffix(strings.TrimPrefix(line, listening), "\n"),
		HTTP: &http.Client{Transport: pool},
		Info: infoFor(args),
	}
}

// listedNames are the names of ep's tools/list (one page: the demo set
// fits).
func listedNames(t *testing.T, ep *mcptest.Endpoint) []string {
	t.Helper()
	res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	if res["nextCursor"] != nil {
		t.Fatalf("tools/list of %s has a next page", ep.URL)
	}
	ts, _ := res["tools"].([]any)
	var names []string
	for _, tl := range ts {
		m, _ := tl.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
	}
	return names
}
