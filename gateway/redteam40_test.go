package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/upstream"
)

// TestInvalidUpstreamRefused: options Connect can never take
// (upstream.Options.Validate) fail New and Reload, naming the upstream's
// place and field, as a bad view pattern does. They were taken as an
// upstream down: New succeeded with it pending, tried in the background
// forever, and a Reload replaced a served upstream with one that could
// never connect.
func TestInvalidUpstreamRefused(t *testing.T) {
	t.Parallel()
	a := serveOrigin(t, says("one", "a one"))
	bad := a.up("a", "")
	bad.Include = []string{"["}
	const want = `gateway: Upstreams[0].Include[0]: "[" is not a path.Match pattern`

	g, err := gateway.New(t.Context(), gateway.Options{Info: info, Server: wymcp.Options{Logger: slog.New(slog.DiscardHandler)}, Upstreams: []upstream.Options{bad}})
	if g != nil {
		_ = g.Shutdown(context.Background())
	}
	var oe *gateway.OptionError
	if err == nil || err.Error() != want || !errors.As(err, &oe) || oe.Field != "Upstreams[0].Include[0]" {
		t.Errorf("New: %v, want %q (a *gateway.OptionError)", err, want)
	}

	g, url := open(t, gateway.Options{Upstreams: []upstream.Options{a.up("a", "")}})
	ep := endpoint(url, "", info.Name)
	if err := g.Reload(t.Context(), gateway.Update{Upstreams: []upstream.Options{bad}}); err == nil || err.Error() != want {
		t.Errorf("Reload: %v, want %q", err, want)
	}
	if got := toolNames(t, ep); strings.Join(got, " ") != "one" {
		t.Errorf("tools %q after a refused reload, want [one]", got)
	}
	if text, isErr := callText(t, ep, "one"); text != `"a one"` || isErr {
		t.Errorf("one after a refused reload: %q (isError %v)", text, isErr)
	}
}

// TestStateStaysWithItsUpstream: a multi-round-trip call's requestState
// carries the upstream's own state, which only that upstream may see.
// When another upstream takes the tool's name meanwhile (one earlier in
// the order connecting late, here), the retry is refused as a state that
// does not open (-32602), and the state is not sent to the other
// upstream; before, the name alone bound it, and it was.
func TestStateStaysWithItsUpstream(t *testing.T) {
	t.Parallel()
	b := serveOrigin(t, askTool)
	lateSrv, err := wymcp.New(originInfo, &wymcp.Options{CacheTTL: 20 * time.Millisecond}, says("ask", "late's ask"))
	if err != nil {
		t.Fatal(err)
	}
	var down, sawState atomic.Bool
	down.Store(true)
	late := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"requestState"`)) {
			sawState.Store(true)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		lateSrv.ServeHTTP(w, r)
	}))
	t.Cleanup(late.Close)
	var log mcptest.SyncBuffer
	_, url := open(t, gateway.Options{
		Server: serverLogging(&log),
		Upstreams: []upstream.Options{
			{Name: "late", URL: late.URL + "/mcp", ConnectTimeout: 30 * time.Second},
			b.up("b", ""),
		},
	})
	ep := endpoint(url, "", info.Name)
	first := mcptest.ToolCall("ask", `{}`).WithCapabilities(`{"elicitation":{}}`)
	_, state := ep.Send(t, first).ExpectInputRequired(t, "1")

	down.Store(false)
	waitLog(t, &log, `tool=ask upstream=b served_by="upstream late"`)
	rep := ep.Send(t, first.WithID(2).Retry(`{"name":{"action":"accept","content":{"name":"Ada"}}}`, state))
	rep.ExpectError(t, 200, -32602, "2")
	if rep.Msg.Error.Message != "Invalid params: requestState is invalid or has expired" {
		t.Errorf("the retry once late serves ask: %s", rep.Raw)
	}
	if sawState.Load() {
		t.Error("b's requestState was sent to late")
	}
}
