package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// allRevisions is -versions serving both eras (docs/design.md §1a).
const allRevisions = "2026-07-28,2025-11-25,2025-06-18"

// discoverInfo returns the serverInfo of the endpoint's server/discover.
func discoverInfo(t *testing.T, ep *mcptest.Endpoint) map[string]any {
	t.Helper()
	res := ep.Send(t, mcptest.Call("server/discover", "")).ExpectResult(t, "1")
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	return info
}

// initializeInfo returns the serverInfo of a 2025-11-25 client's
// initialize.
func initializeInfo(t *testing.T, ep *mcptest.Endpoint) map[string]any {
	t.Helper()
	rep := ep.Send(t, mcptest.RPC{
		Body:    `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		Headers: map[string]string{"MCP-Protocol-Version": ""},
	})
	var res struct {
		ServerInfo map[string]any `json:"serverInfo"`
	}
	if rep.Status != 200 || rep.Msg.Error != nil || json.Unmarshal(rep.Msg.Result, &res) != nil {
		t.Fatalf("initialize: %d %s", rep.Status, rep.Raw)
	}
	return res.ServerInfo
}

// TestServerName: the binary names itself after what it serves: the demo
// set as wymcp-demo, the conformance set as wymcp-conformance, a gateway
// serving only its upstreams' tools (-tools none) as wymcp; -name and
// -version win. server/discover, a 2025-era initialize and every result
// say the same.
func TestServerName(t *testing.T) {
	t.Parallel()
	_, origin := serveOrigin(t, nil, says("greet", "hi"))
	file := upstreamsFile(t, "", "upstreams:\n  - {name: a, url: "+origin+"}\n")
	tests := []struct {
		name string
		args []string
		want protocol.Implementation
	}{
		{"a gateway, -tools none", []string{"-tools", "none", "-upstreams", file}, protocol.Implementation{Name: "wymcp", Version: version}},
		{"a gateway, -name and -version", []string{"-tools", "none", "-upstreams", file, "-name", "acme-gateway", "-version", "2.3.4"}, protocol.Implementation{Name: "acme-gateway", Version: "2.3.4"}},
		{"the demo set", nil, protocol.Implementation{Name: "wymcp-demo", Version: version}},
		{"the demo set, -name", []string{"-name", "my demo"}, protocol.Implementation{Name: "my demo", Version: version}},
		{"the conformance set", []string{"-tools", "conformance"}, protocol.Implementation{Name: "wymcp-conformance", Version: version}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, append([]string{"-versions", allRevisions}, tt.args...)...)
			if s.ep.Info.Name != tt.want.Name || s.ep.Info.Version != tt.want.Version {
				t.Fatalf("the test's infoFor = %+v, want %+v", s.ep.Info, tt.want)
			}
			want := map[string]any{"name": tt.want.Name, "version": tt.want.Version}
			if got := discoverInfo(t, s.ep); len(got) != 2 || got["name"] != want["name"] || got["version"] != want["version"] {
				t.Errorf("server/discover serverInfo = %v, want %v", got, want)
			}
			if got := initializeInfo(t, s.ep); len(got) != 2 || got["name"] != want["name"] || got["version"] != want["version"] {
				t.Errorf("initialize serverInfo = %v, want %v", got, want)
			}
			// Every result's _meta: ExpectResult checks it against ep.Info.
			toolNames(t, s.ep)
			if len(tt.args) > 1 && tt.args[1] == toolSetNone {
				if text, _ := callText(t, s.ep, "greet", `{}`); text != `"hi"` {
					t.Errorf("greet through the gateway: %q", text)
				}
			}
		})
	}
}

// TestServerNameUsage: -version and -name cannot be blank: serverInfo's
// name and version are required strings.
func TestServerNameUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-version", ""}, "-version must not be empty"},
		{[]string{"-version", " "}, "-version must not be empty"},
		{[]string{"-name", "  "}, "-name must not be blank"},
	} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tt.args...), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.msg) || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and %q", tt.args, code, stderr.String(), stdout.String(), tt.msg)
		}
	}
}
