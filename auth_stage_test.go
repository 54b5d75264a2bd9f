package wymcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// testMetadata is the resource_metadata the auth tests' challenges name.
const testMetadata = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"

// fakeAuthenticator authenticates by the bearer token's name, so that the
// tests of the auth stage choose each outcome (the real authenticators are
// tested in package auth).
func fakeAuthenticator(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
	switch r.Header.Get("Authorization") {
	case "":
		return nil, &wymcp.AuthError{Code: wymcp.AuthNoToken}
	case "Bearer reader":
		return &wymcp.Principal{Subject: "alice", Scopes: []string{"mcp", "files:read"}}, nil
	case "Bearer admin":
		return &wymcp.Principal{Subject: "root", Scopes: []string{"files:read", "admin", "mcp"}}, nil
	case "Bearer outsider":
		return &wymcp.Principal{Subject: "eve", Scopes: []string{"files:read"}}, nil
	case "Bearer narrow":
		return nil, &wymcp.AuthError{Code: wymcp.AuthInsufficientScope, Scopes: []string{"extra"}, Description: "needs extra"}
	case "Bearer query":
		return nil, &wymcp.AuthError{Code: wymcp.AuthInvalidRequest, Description: "access tokens are accepted in the Authorization header only"}
	case "Bearer down":
		return nil, &wymcp.AuthError{Code: wymcp.AuthUnavailable, Err: errors.New("dial tcp 127.0.0.1:9: connection refused")}
	case "Bearer panic":
		panic("authenticator exploded")
	case "Bearer plain-error":
		return nil, errors.New("some library's error")
	case "Bearer nobody":
		return nil, nil
	case "Bearer slow":
		<-ctx.Done()
		return nil, &wymcp.AuthError{Code: wymcp.AuthUnavailable, Err: ctx.Err()}
	}
	return nil, &wymcp.AuthError{Code: wymcp.AuthInvalidToken, Description: "bad \"token\"\r\nX-Injected: yes"}
}

type whoIn struct{}

type whoOut struct {
	Subject string   `json:"subject"`
	Scopes  []string `json:"scopes"`
}

// authTools are the tools of the auth tests besides testTools: whoami
// (typed, unscoped), whoami_raw (raw, files:read) and admin_only (admin),
// each answering with the principal it sees.
func authTools() []*tools.Tool {
	who := func(ctx context.Context) whoOut {
		p := wymcp.PrincipalFrom(ctx)
		if p == nil {
			return whoOut{Subject: "<none>"}
		}
		return whoOut{Subject: p.Subject, Scopes: p.Scopes}
	}
	return []*tools.Tool{
		tools.Must(tools.New("whoami", "Says who called.", func(ctx context.Context, _ whoIn) (whoOut, error) { return who(ctx), nil })),
		tools.Must(tools.NewRaw("whoami_raw", "Says who called, needing files:read.", []byte(`{"type":"object"}`),
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				return protocol.TextResult(who(ctx).Subject), nil
			}, tools.WithScopes("files:read"))),
		tools.Must(tools.New("admin_only", "Needs admin.", func(ctx context.Context, _ whoIn) (whoOut, error) { return who(ctx), nil },
			tools.WithScopes("admin"))),
	}
}

// newAuthServer serves testTools and extra with opts, whose Auth is the fake
// authenticator with the test metadata and the required scope "mcp" unless
// the test set its own.
func newAuthServer(t testing.TB, opts *wymcp.Options, extra ...*tools.Tool) *mcptest.Endpoint {
	t.Helper()
	if opts == nil {
		opts = &wymcp.Options{}
	}
	if opts.Auth == nil {
		opts.Auth = &wymcp.AuthOptions{
			Authenticator:    wymcp.AuthenticatorFunc(fakeAuthenticator),
			ResourceMetadata: testMetadata,
			RequiredScopes:   []string{"mcp"},
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	info := protocol.Implementation{Name: "wymcp-test", Version: "0.0.1"}
	srv, err := wymcp.New(info, opts, append(testTools(t, nil), extra...)...)
	if err != nil {
		t.Fatalf("wymcp.New: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return &mcptest.Endpoint{URL: hs.URL, HTTP: hs.Client(), Info: info}
}

func bearer(r mcptest.RPC, token string) mcptest.RPC { return r.With("Authorization", "Bearer "+token) }

// toolNames returns the names of a tools/list page.
func toolNames(res map[string]any) []string {
	var names []string
	list, _ := res["tools"].([]any)
	for _, tool := range list {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// TestPrincipalReachesTools: the principal the authenticator returns is
// what a typed and a raw handler read with wymcp.PrincipalFrom.
func TestPrincipalReachesTools(t *testing.T) {
	t.Parallel()
	hs := newAuthServer(t, nil, authTools()...)
	res := hs.Send(t, bearer(mcptest.ToolCall("whoami", `{}`), "reader")).ExpectResult(t, "1")
	var out whoOut
	if b, _ := json.Marshal(res["structuredContent"]); json.Unmarshal(b, &out) != nil || out.Subject != "alice" || !slices.Equal(out.Scopes, []string{"mcp", "files:read"}) {
		t.Errorf("typed tool saw %+v", res["structuredContent"])
	}
	res = hs.Send(t, bearer(mcptest.ToolCall("whoami_raw", `{}`), "reader")).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); isErr || text != "alice" {
		t.Errorf("raw tool saw %q (isError %v)", text, isErr)
	}
	// Without an authenticator there is no principal.
	srv, err := wymcp.New(protocol.Implementation{Name: "x", Version: "1"}, nil, authTools()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ep := mcptest.Serve(t, srv, protocol.Implementation{Name: "x", Version: "1"})
	res = ep.Send(t, mcptest.ToolCall("whoami", `{}`)).ExpectResult(t, "1")
	if sc, _ := res["structuredContent"].(map[string]any); sc["subject"] != "<none>" {
		t.Errorf("unauthenticated server: tool saw %v", sc)
	}
}

// TestScopedToolsList: tools/list shows each caller the tools it may call,
// and such pages are cacheScope "private"; server/discover stays public;
// a server whose tools need no scopes keeps its lists public even with an
// authenticator (docs/design.md §5, Results).
func TestScopedToolsList(t *testing.T) {
	t.Parallel()
	hs := newAuthServer(t, nil, authTools()...)
	all := toolNames(hs.Send(t, bearer(mcptest.Call("tools/list", ""), "admin")).ExpectResult(t, "1"))
	reader := hs.Send(t, bearer(mcptest.Call("tools/list", ""), "reader")).ExpectResult(t, "1")
	if reader["cacheScope"] != "private" {
		t.Errorf("scoped list: cacheScope %v, want private", reader["cacheScope"])
	}
	names := toolNames(reader)
	if slices.Contains(names, "admin_only") || !slices.Contains(names, "whoami_raw") || !slices.Contains(names, "echo") {
		t.Errorf("reader sees %v", names)
	}
	if !slices.Contains(all, "admin_only") || len(all) != len(names)+1 {
		t.Errorf("admin sees %v, reader %v", all, names)
	}
	if d := hs.Send(t, bearer(mcptest.Call("server/discover", ""), "reader")).ExpectResult(t, "1"); d["cacheScope"] != "public" {
		t.Errorf("server/discover cacheScope %v", d["cacheScope"])
	}
	// The same subset twice gives the same bytes (built once, then cached).
	a := hs.Send(t, bearer(mcptest.Call("tools/list", ""), "reader"))
	b := hs.Send(t, bearer(mcptest.Call("tools/list", ""), "reader"))
	if string(a.Raw) != string(b.Raw) {
		t.Error("two lists of one subset differ")
	}

	plain := newAuthServer(t, nil)
	if res := plain.Send(t, bearer(mcptest.Call("tools/list", ""), "reader")).ExpectResult(t, "1"); res["cacheScope"] != "public" {
		t.Errorf("no scoped tools: cacheScope %v, want public", res["cacheScope"])
	}
}

// TestScopedCursors: cursors chain within a caller's subset, and a cursor
// made for one subset is refused (-32602) in another.
func TestScopedCursors(t *testing.T) {
	t.Parallel()
	hs := newAuthServer(t, &wymcp.Options{PageSize: 2}, authTools()...)
	walk := func(token string) (names []string, cursors []string) {
		cursor := ""
		for i := 0; i < 20; i++ {
			req := mcptest.Call("tools/list", "")
			if cursor != "" {
				req = mcptest.Call("tools/list", `"cursor":`+mcptest.Quote(cursor))
			}
			res := hs.Send(t, bearer(req, token)).ExpectResult(t, "1")
			if res["cacheScope"] != "private" {
				t.Errorf("page %d: cacheScope %v", i, res["cacheScope"])
			}
			names = append(names, toolNames(res)...)
			next, ok := res["nextCursor"].(string)
			if !ok {
				return names, cursors
			}
			cursors = append(cursors, next)
			cursor = next
		}
		t.Fatal("no last page")
		return nil, nil
	}
	adminNames, adminCursors := walk("admin")
	readerNames, readerCursors := walk("reader")
	if len(adminNames) != len(readerNames)+1 || slices.Contains(readerNames, "admin_only") {
		t.Errorf("admin %v, reader %v", adminNames, readerNames)
	}
	for _, c := range adminCursors {
		if slices.Contains(readerCursors, c) {
			t.Errorf("cursor %q is shared by two subsets", c)
		}
	}
	hs.Send(t, bearer(mcptest.Call("tools/list", `"cursor":`+mcptest.Quote(adminCursors[0])), "reader")).ExpectError(t, 200, -32602, "1")
}

// TestNewRefusesUnusableAuth: a scoped tool without an authenticator, and
// AuthOptions that cannot be served, fail New.
func TestNewRefusesUnusableAuth(t *testing.T) {
	t.Parallel()
	info := protocol.Implementation{Name: "x", Version: "1"}
	fake := wymcp.AuthenticatorFunc(fakeAuthenticator)
	for name, tc := range map[string]struct {
		opts *wymcp.Options
		want string
	}{
		"scoped tool, no auth":  {nil, "Options.Auth is nil"},
		"no authenticator":      {&wymcp.Options{Auth: &wymcp.AuthOptions{}}, "needs an Authenticator"},
		"bad required scope":    {&wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: fake, RequiredScopes: []string{"a b"}}}, "invalid scope"},
		"metadata not absolute": {&wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: fake, ResourceMetadata: "/.well-known/x"}}, "not an absolute"},
		"metadata with a quote": {&wymcp.Options{Auth: &wymcp.AuthOptions{Authenticator: fake, ResourceMetadata: `https://a.test/"x`}}, "not an absolute"},
	} {
		_, err := wymcp.New(info, tc.opts, authTools()...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, tc.want)
		}
	}
}

// recordedServer is newAuthServer with a span recorder and a log capture.
func recordedServer(t *testing.T, record bool) (*mcptest.Endpoint, *tracetest.SpanRecorder, *logCapture) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	logs := &logCapture{}
	hs := newAuthServer(t, &wymcp.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		Logger:         slog.New(logs),
		Auth: &wymcp.AuthOptions{
			Authenticator:    wymcp.AuthenticatorFunc(fakeAuthenticator),
			ResourceMetadata: testMetadata,
			RequiredScopes:   []string{"mcp"},
			RecordSubject:    record,
		},
	}, authTools()...)
	return hs, rec, logs
}

// spanAttr returns the attribute key of the last ended span, "" if absent.
func spanAttr(rec *tracetest.SpanRecorder, key string) (string, bool) {
	spans := rec.Ended()
	if len(spans) == 0 {
		return "", false
	}
	for _, a := range spans[len(spans)-1].Attributes() {
		if string(a.Key) == key {
			return a.Value.String(), true
		}
	}
	return "", false
}

// TestAuthenticatorPanicContained: a panicking authenticator is answered
// -32603 "Internal error" with the request's id at HTTP 200; the span gets
// an exception event with the stack and status Error, the log one Error
// record; the connection and the server go on (docs/design.md §5, §7).
func TestAuthenticatorPanicContained(t *testing.T) {
	t.Parallel()
	hs, rec, logs := recordedServer(t, false)
	rep := hs.Send(t, bearer(mcptest.ToolCall("echo", `{"text":"x"}`).WithID(41), "panic"))
	rep.ExpectError(t, 200, -32603, "41")
	if rep.Msg.Error.Message != "Internal error" || strings.Contains(string(rep.Raw), "exploded") {
		t.Errorf("answer %s", rep.Raw)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	var found bool
	for _, ev := range spans[0].Events() {
		if ev.Name != "exception" {
			continue
		}
		attrs := map[string]string{}
		for _, a := range ev.Attributes {
			attrs[string(a.Key)] = a.Value.String()
		}
		found = attrs["exception.message"] == "authenticator exploded" && attrs["wymcp.containment"] == "authenticator" &&
			strings.Contains(attrs["exception.stacktrace"], "fakeAuthenticator")
	}
	if !found {
		t.Errorf("no exception event with the stack: %+v", spans[0].Events())
	}
	if spans[0].Status().Code.String() != "Error" {
		t.Errorf("span status %v", spans[0].Status())
	}
	if recs := logs.records(); len(recs) != 1 || recs[0].Level != slog.LevelError || !strings.Contains(recs[0].attrs["exception.stacktrace"], "fakeAuthenticator") {
		t.Errorf("log records %+v", recs)
	}
	// The same connection serves the next request.
	hs.Send(t, bearer(mcptest.ToolCall("echo", `{"text":"after"}`), "reader")).ExpectResult(t, "1")
}

// TestSubjectOnSpanOnlyWhenAsked: privacy by default, enduser.id (the
// caller's key, "sub:" and the subject) on the span with RecordSubject.
func TestSubjectOnSpanOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	hs, rec, _ := recordedServer(t, false)
	hs.Send(t, bearer(mcptest.ToolCall("echo", `{"text":"x"}`), "reader")).ExpectResult(t, "1")
	if v, ok := spanAttr(rec, "enduser.id"); ok {
		t.Errorf("enduser.id = %q without RecordSubject", v)
	}
	hs, rec, _ = recordedServer(t, true)
	hs.Send(t, bearer(mcptest.ToolCall("echo", `{"text":"x"}`), "reader")).ExpectResult(t, "1")
	// The caller's key (docs/design.md §6): users and clients apart.
	if v, _ := spanAttr(rec, "enduser.id"); v != "sub:alice" {
		t.Errorf("enduser.id = %q with RecordSubject, want sub:alice", v)
	}
	hs.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`)).ExpectError(t, 401, -32600, "1")
	if v, _ := spanAttr(rec, "wymcp.auth.refusal"); v != "no_token" {
		t.Errorf("wymcp.auth.refusal = %q", v)
	}
}

// TestAuthUnavailableLogged: a credential that cannot be checked is
// answered 503 and logged, at most once a second however many requests
// fail (an outage must not flood the log).
func TestAuthUnavailableLogged(t *testing.T) {
	t.Parallel()
	hs, _, logs := recordedServer(t, false)
	for i := range 5 {
		rep := hs.Send(t, bearer(mcptest.Call("tools/list", "").WithID(i), "down"))
		rep.ExpectError(t, 503, -32603, mcptestID(i))
	}
	recs := logs.records()
	if len(recs) != 1 || recs[0].Level != slog.LevelError || !strings.Contains(recs[0].attrs["error"], "connection refused") {
		t.Errorf("log records %+v", recs)
	}
}

func mcptestID(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestClientGoneDuringAuth: a client that leaves while its credential is
// checked gets nothing written, and the server goes on.
func TestClientGoneDuringAuth(t *testing.T) {
	t.Parallel()
	hs := newAuthServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := hs.Abandon(ctx, bearer(mcptest.Call("tools/list", ""), "slow")); err == nil {
		t.Error("the abandoned request was answered")
	}
	hs.Send(t, bearer(mcptest.Call("tools/list", ""), "reader")).ExpectResult(t, "1")
}

// logCapture is a slog.Handler keeping every record with its attributes.
type logCapture struct {
	mu   sync.Mutex
	recs []capturedRecord
}

type capturedRecord struct {
	Level slog.Level
	Msg   string
	attrs map[string]string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := capturedRecord{Level: r.Level, Msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.String(); return true })
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }
func (c *logCapture) records() []capturedRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.recs)
}
