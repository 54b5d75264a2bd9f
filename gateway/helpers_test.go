package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
	"github.com/wymcp/wymcp/upstream"
)

// The gateway's tests: upstreams that are wymcp servers on loopback, the
// gateway served on loopback, called over HTTP.

// info is the gateway's Implementation, originInfo the upstreams'.
var (
	info       = protocol.Implementation{Name: "gw", Version: "1.0.0"}
	originInfo = protocol.Implementation{Name: "origin", Version: "1.0.0"}
)

// origin is an upstream MCP server on 127.0.0.1 that can be down (503 to
// everything) until it is brought up.
type origin struct {
	srv  *wymcp.Server
	url  string
	down atomic.Bool
	// lists counts the tools/list requests it was sent.
	lists atomic.Int64
}

// serveOrigin serves ts as an upstream; its tools change at once for the
// gateway's watch (ttlMs of 20 ms: the watch's least interval, a second).
func serveOrigin(t *testing.T, ts ...*tools.Tool) *origin {
	t.Helper()
	s, err := wymcp.New(originInfo, &wymcp.Options{CacheTTL: 20 * time.Millisecond}, ts...)
	if err != nil {
		t.Fatal(err)
	}
	o := &origin{srv: s}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Mcp-Method") == "tools/list" {
			o.lists.Add(1)
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	o.url = hs.URL + "/mcp"
	return o
}

// up are the options of the upstream o, named name. Its ConnectTimeout
// has room for a loaded machine: an upstream down answers 503 at once, and
// one connected late would be pending, its tools missing from the test.
func (o *origin) up(name, prefix string) upstream.Options {
	return upstream.Options{Name: name, URL: o.url, Prefix: prefix, ConnectTimeout: 30 * time.Second}
}

// says is a tool that answers text.
func says(name, text string) *tools.Tool {
	return tools.Must(tools.New(name, "Says "+text+".", func(context.Context, struct{}) (string, error) { return text, nil }))
}

// logTo is a logger writing text lines to buf.
func logTo(buf *mcptest.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, nil))
}

// open builds the gateway, serves it on loopback and shuts it down at the
// test's end.
func open(t *testing.T, opts gateway.Options) (*gateway.Gateway, string) {
	t.Helper()
	if opts.Info.Name == "" {
		opts.Info = info
	}
	if opts.Server.Logger == nil {
		opts.Server.Logger = slog.New(slog.DiscardHandler)
	}
	g, err := gateway.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		_ = g.Shutdown(context.Background())
	})
	return g, hs.URL
}

// endpoint is the view at url+path, answering as name.
func endpoint(url, path, name string) *mcptest.Endpoint {
	return &mcptest.Endpoint{URL: url + path, HTTP: http.DefaultClient, Info: protocol.Implementation{Name: name, Version: info.Version}}
}

// toolNames lists the endpoint's tools, sorted.
func toolNames(t *testing.T, ep *mcptest.Endpoint) []string {
	t.Helper()
	res := ep.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	var names []string
	list, _ := res["tools"].([]any)
	for _, tool := range list {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

// callText calls a tool through ep and returns its text and isError.
func callText(t *testing.T, ep *mcptest.Endpoint, name string) (string, bool) {
	t.Helper()
	return mcptest.ToolText(t, ep.Send(t, mcptest.ToolCall(name, `{}`)).ExpectResult(t, "1"))
}

// waitTools waits until ep lists want (sorted), for up to 20 s: an
// upstream's change is seen at its watch's next refresh, a second on.
func waitTools(t *testing.T, ep *mcptest.Endpoint, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := toolNames(t, ep)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLog waits until buf holds want, for up to 20 s.
func waitLog(t *testing.T, buf *mcptest.SyncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(buf.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("not logged: %s\n%s", want, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serverLogging are server options logging to buf.
func serverLogging(buf *mcptest.SyncBuffer) wymcp.Options {
	return wymcp.Options{Logger: logTo(buf)}
}

// serverKeys are server options with the state keys ks.
func serverKeys(ks ...[]byte) wymcp.Options { return wymcp.Options{StateKeys: ks} }

// readyz returns the status of the gateway's readiness endpoint.
func readyz(t *testing.T, g *gateway.Gateway) int {
	t.Helper()
	rec := httptest.NewRecorder()
	g.ReadinessHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	return rec.Code
}
