package gateway_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/gateway"
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
