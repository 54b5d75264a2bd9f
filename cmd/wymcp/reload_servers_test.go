package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
)

// TestReloadServersReadAtStart: the servers: list, and each view's path,
// name and scopes, are read at start (its auth is built then). A SIGHUP
// whose file drops servers:, or changes a view's name or scopes, is
// refused, logged, and changes nothing, its tools included (whole or not
// at all); it used to be applied without them and logged as reloaded, a
// view's added scope never required. A change of a view's tools alone is
// applied.
func TestReloadServersReadAtStart(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("one", "a one"), says("two", "a two"))
	ups := "upstreams:\n  - {name: a, url: '" + a + "'}\n"
	file := upstreamsFile(t, "", ups+"servers:\n  - {path: /v, name: team, tools: [one], scopes: [s1]}\n")
	cfg, err := loadUpstreams(file, true)
	if err != nil {
		t.Fatal(err)
	}
	var log mcptest.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	info := protocol.Implementation{Name: "gw", Version: "1.0.0"}
	g, err := gateway.New(t.Context(), gateway.Options{Info: info, Server: wymcp.Options{Logger: logger},
		Upstreams: upstreamOptions(cfg), Views: gatewayViews(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		_ = g.Shutdown(context.Background())
	})
	ep := &mcptest.Endpoint{URL: hs.URL + "/v", HTTP: http.DefaultClient, Info: protocol.Implementation{Name: "team", Version: info.Version}}
	rl := newReloader(g, cfg, true, logger)

	for _, c := range []struct{ servers, want string }{
		{"servers:\n  - {path: /v, name: team, tools: [one, two], scopes: [s1, s2]}\n",
			`servers[0].scopes: [s1 s2], [s1] at start: a view's path, name and scopes are read at start (a restart applies them); a reload applies its tools, allow and rateLimit`},
		{"servers:\n  - {path: /v, name: other, tools: [one, two], scopes: [s1]}\n",
			`servers[0].name: "other", "team" at start: a view's path, name and scopes are read at start (a restart applies them); a reload applies its tools, allow and rateLimit`},
		{"",
			`servers: 0 views, 1 at start: views are added or removed by a restart; a reload applies their tools`},
	} {
		upstreamsFile(t, file, ups+c.servers)
		rl.reload(t.Context())
		want := `level=ERROR msg="upstreams not reloaded; serving as before" file=` + file + ` err="-upstreams ` + file + `: ` + strings.ReplaceAll(c.want, `"`, `\"`) + `"`
		if !strings.Contains(log.String(), want) {
			t.Errorf("reload with\n%s\nlogged:\n%s\nwant %s", c.servers, log.String(), want)
		}
		if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
			t.Errorf("tools %q after a refused reload, want [one]", got)
		}
	}

	upstreamsFile(t, file, ups+"servers:\n  - {path: /v, name: team, tools: [one, two], scopes: [s1]}\n")
	rl.reload(t.Context())
	if got := toolNames(t, ep); strings.Join(got, " ") != "one two" {
		t.Errorf("tools %q after a reload of the view's tools, want [one two]\n%s", got, log.String())
	}
}
