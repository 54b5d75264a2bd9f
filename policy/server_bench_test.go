package policy_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/policy"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// BenchmarkPolicyCall is a tools/call of echo through wymcp.Server.ServeHTTP
// behind an authenticator whose principal carries groups, with no rule and
// with one simple claim check (docs/design.md §11: what a rule adds).
func BenchmarkPolicyCall(b *testing.B) {
	p := &wymcp.Principal{Subject: "alice", ClientID: "cli", Scopes: []string{"mcp"},
		Claims: map[string]any{"sub": "alice", "groups": []any{"dev", "oncall"}}}
	authn := wymcp.AuthenticatorFunc(func(context.Context, *http.Request) (*wymcp.Principal, error) { return p, nil })
	run := func(b *testing.B, opts ...tools.Option) {
		echo := tools.Must(tools.NewRaw("echo", "Echoes.", []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`),
			func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
				return protocol.TextResult("hello"), nil
			}, opts...))
		srv, err := wymcp.New(protocol.Implementation{Name: "wymcp-bench", Version: "0.0.1"}, &wymcp.Options{
			Logger: slog.New(slog.DiscardHandler), TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
			Auth: &wymcp.AuthOptions{Authenticator: authn},
		}, echo)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
		body := mcptest.ToolCall("echo", `{"text":"hello"}`).Body
		hdr := http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {"echo"},
			"Authorization":        {"Bearer t"},
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header = hdr.Clone()
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "hello") {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	}
	b.Run("none", func(b *testing.B) { run(b) })
	b.Run("claim", func(b *testing.B) {
		r, err := policy.Compile(`"oncall" in caller.claims.groups`)
		if err != nil {
			b.Fatal(err)
		}
		run(b, tools.WithAllow(r))
	})
}
