package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/access"
)

// yamlBlocks returns the contents of the ```yaml blocks of a Markdown file.
func yamlBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(b)) {
		switch l := strings.TrimRight(line, "\n"); {
		case cur == nil && l == "```yaml":
			cur = new(strings.Builder)
		case cur != nil && l == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	if cur != nil {
		t.Fatalf("%s: a ```yaml block is not closed", path)
	}
	return blocks
}

// TestOperationsYAMLBlocks: every -upstreams file docs/operations.md shows
// is read as the binary reads it (the keys, the values, what
// gateway.Options.Validate checks), with auth on, as its scopes need. A
// block of servers: alone is a fragment, read after "upstreams: []".
func TestOperationsYAMLBlocks(t *testing.T) {
	t.Parallel()
	const doc = "../../docs/operations.md"
	blocks := yamlBlocks(t, doc)
	if len(blocks) < 3 {
		t.Fatalf("%s has %d yaml blocks, want the gateway's (every key, stdio, servers:, a whole gateway)", doc, len(blocks))
	}
	for i, b := range blocks {
		if strings.HasPrefix(b, "servers:") {
			b = "upstreams: []\n" + b
		}
		cfg, err := parseUpstreams(doc, []byte(b), true)
		if err == nil {
			_, err = cfg.validated()
		}
		if err != nil {
			t.Errorf("%s: yaml block %d: %v\n%s", doc, i+1, err, b)
		}
	}
}

// TestGatewayFile: deploy/gateway.yaml, which the README runs, is read
// without auth, as the README runs it.
func TestGatewayFile(t *testing.T) {
	t.Parallel()
	const file = "../../deploy/gateway.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseUpstreams(file, data, false)
	if err == nil {
		_, err = cfg.validated()
	}
	if err != nil {
		t.Fatal(err)
	}
	if o := upstreamOptions(cfg); len(o) != 1 || o[0].Name != "demo" || o[0].URL != "http://127.0.0.1:3001/mcp" || o[0].Prefix != "demo_" {
		t.Errorf("upstreams %+v", o)
	}
}

// TestTeamsExample: deploy/teams.example.yaml, the whole gateway of
// docs/operations.md, is refused without auth (its views' scopes), is read
// with it as its comments say (an HTTP and a stdio upstream, two views),
// and its rules decide as they say.
func TestTeamsExample(t *testing.T) {
	t.Parallel()
	const file = "../../deploy/teams.example.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseUpstreams(file, data, false); err == nil || !strings.Contains(err.Error(), "scopes: "+noScope) {
		t.Errorf("without auth: %v, want the scopes refused", err)
	}
	cfg, err := parseUpstreams(file, data, true)
	if err == nil {
		_, err = cfg.validated()
	}
	if err != nil {
		t.Fatal(err)
	}
	ups, views := upstreamOptions(cfg), gatewayViews(cfg)
	if len(ups) != 2 || len(views) != 2 {
		t.Fatalf("%d upstreams, %d views; want 2 and 2", len(ups), len(views))
	}
	demo, files := ups[0], ups[1]
	if demo.URL != "http://127.0.0.1:3001/mcp" || demo.Prefix != "demo_" || demo.RateLimit != (access.Limit{Calls: 120, Per: time.Minute}) {
		t.Errorf("demo: %+v", demo)
	}
	if files.URL != "" || files.Command != "npx" || files.Prefix != "files_" || files.PerCaller || len(files.Args) != 3 || files.Args[2] != "/srv/shared" {
		t.Errorf("files: %+v", files)
	}
	dev, support := views[0], views[1]
	if dev.Path != "/mcp/dev" || dev.Tools != nil || dev.Allow != nil || cfg.servers[0].Scopes[0] != "team-dev" {
		t.Errorf("dev: %+v", dev)
	}
	if support.Path != "/mcp/support" || len(support.Tools) != 4 || support.RateLimit != (access.Limit{Calls: 600, Per: time.Minute}) || cfg.servers[1].Scopes[0] != "team-support" {
		t.Errorf("support: %+v", support)
	}
	who := func(groups ...any) *access.Caller {
		return &access.Caller{Subject: "u", Claims: map[string]any{"sub": "u", "groups": groups}}
	}
	for _, c := range []struct {
		name string
		rule access.Rule
		req  access.Request
		want bool
	}{
		{"write_file: on-call", files.Overrides["write_file"].Allow, access.Request{Caller: who("oncall"), Tool: &access.Tool{Name: "files_write_file", Upstream: "files", Annotations: map[string]any{}}}, true},
		{"write_file: others", files.Overrides["write_file"].Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "files_write_file", Upstream: "files", Annotations: map[string]any{}}}, false},
		{"edit_file: no groups", files.Overrides["edit_file"].Allow, access.Request{Caller: &access.Caller{Subject: "u"}, Tool: &access.Tool{Name: "files_edit_file", Upstream: "files", Annotations: map[string]any{}}}, false},
		{"move_file: on-call", files.Overrides["move_file"].Allow, access.Request{Caller: who("oncall"), Tool: &access.Tool{Name: "files_move_file", Upstream: "files", Annotations: map[string]any{}}}, true},
		{"create_directory: others", files.Overrides["create_directory"].Allow, access.Request{Caller: who("support"), Tool: &access.Tool{Name: "files_create_directory", Upstream: "files", Annotations: map[string]any{}}}, false},
		{"support view: support", support.Allow, access.Request{Caller: who("support"), Tool: &access.Tool{Name: "demo_echo", Upstream: "demo", Annotations: map[string]any{}}}, true},
		{"support view: others", support.Allow, access.Request{Caller: who("dev"), Tool: &access.Tool{Name: "demo_echo", Upstream: "demo", Annotations: map[string]any{}}}, false},
	} {
		if c.rule == nil {
			t.Errorf("%s: no rule", c.name)
			continue
		}
		got, err := c.rule.Allow(t.Context(), &c.req)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
