package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/tools"
)

// startServers is start with the file's servers: set to views (what the
// reader of servers: produces), the listening line's URL's scheme and host
// returned.
func startServers(t *testing.T, log io.Writer, views []*serverEntry, args ...string) string {
	t.Helper()
	c, err := parseFlags(append([]string{"-addr", "127.0.0.1:0", "-drain-delay", "0"}, args...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c.upstreams.servers = views
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, c, pw, log)
		pw.CloseWithError(errors.New("serve returned"))
		done <- err
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("reading the listening line: %v (serve: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := strings.TrimSuffix(strings.TrimPrefix(line, "wymcp listening on "), "\n")
	if want := views[0].Path; !strings.HasSuffix(url, want) {
		t.Fatalf("listening line %q, want the first view's URL", line)
	}
	return strings.TrimSuffix(url, views[0].Path)
}

// TestServers: with servers:, each view is its own endpoint at its path,
// serving the tools its patterns pick (tools/list and calls), its
// serverInfo named; -path is not served.
func TestServers(t *testing.T) {
	t.Parallel()
	_, a := serveOrigin(t, nil, says("greet", "a greets"))
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n    prefix: a_\n")
	base := startServers(t, t.Output(), []*serverEntry{
		{Path: "/team/mcp", Tools: []string{"echo", "a_*"}, Name: "team"},
		{Path: "/all/mcp"},
	}, "-upstreams", file)
	team := &mcptest.Endpoint{URL: base + "/team/mcp", HTTP: http.DefaultClient, Info: infoFor(nil)}
	team.Info.Name = "team"
	all := &mcptest.Endpoint{URL: base + "/all/mcp", HTTP: http.DefaultClient, Info: infoFor(nil)}
	if got, want := toolNames(t, team), []string{"a_greet", "echo"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("/team/mcp tools %q, want %q", got, want)
	}
	if got := toolNames(t, all); len(got) != len(demoNames)+1 {
		t.Errorf("/all/mcp tools %q, want the demo set and a_greet", got)
	}
	if text, _ := callText(t, team, "a_greet", `{}`); text != `"a greets"` {
		t.Errorf("a_greet on /team/mcp: %q", text)
	}
	team.Send(t, mcptest.ToolCall("add", `{"a":1,"b":2}`)).ExpectError(t, 200, -32602, "1")
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("-path with servers: %d, want 404", resp.StatusCode)
	}
}

// TestServersAuth: with auth, each view is its own protected resource:
// its resource URI is the server's URL with its path, a token must name
// it (one for /mcp/a is refused, 401 invalid_token, on /mcp/b), its
// metadata is at its path-inserted well-known URI, and its scopes are
// required of every request to it.
func TestServersAuth(t *testing.T) {
	t.Parallel()
	signer := newES256(t, "k1")
	keys := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(keys, signer.jwks(), 0o600); err != nil {
		t.Fatal(err)
	}
	greet := tools.Must(tools.New("greet", "Greets.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "a greets " + in.Text, nil
	}))
	_, a := serveOrigin(t, nil, greet)
	file := upstreamsFile(t, "", "upstreams:\n  - name: a\n    url: "+a+"\n")
	const iss = "https://as.example.test"
	base := startServers(t, t.Output(), []*serverEntry{
		{Path: "/mcp/a", Tools: []string{"echo"}},
		{Path: "/mcp/b", Tools: []string{"echo", "greet"}, Scopes: []string{"team-b"}},
	}, "-upstreams", file, "-auth-issuer", iss, "-auth-jwks", keys, "-auth-required-scope", "mcp")
	token := func(aud, scope string) string {
		return signer.sign(t, map[string]any{"iss": iss, "aud": aud, "sub": "ada", "scope": scope, "exp": time.Now().Add(time.Hour).Unix()})
	}
	va, vb := base+"/mcp/a", base+"/mcp/b"
	resp, body := authPost(t, va, token(va, "mcp"), "tools/call", "echo")
	if resp.StatusCode != 200 || !strings.Contains(body, `"text":"hi"`) {
		t.Errorf("/mcp/a with its token: %d %s", resp.StatusCode, body)
	}
	resp, _ = authPost(t, vb, token(va, "mcp team-b"), "tools/call", "echo")
	if want := `Bearer error="invalid_token"`; resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), want) ||
		!strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp/b"`) {
		t.Errorf("/mcp/a's token on /mcp/b: %d %q, want 401 invalid_token naming /mcp/b's metadata", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	resp, _ = authPost(t, vb, token(vb, "mcp"), "tools/call", "echo")
	if resp.StatusCode != 403 {
		t.Errorf("/mcp/b without its scope team-b: %d, want 403", resp.StatusCode)
	}
	resp, body = authPost(t, vb, token(vb, "mcp team-b"), "tools/call", "greet")
	if resp.StatusCode != 200 || !strings.Contains(body, `a greets hi`) {
		t.Errorf("/mcp/b with its token: %d %s", resp.StatusCode, body)
	}
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource/mcp/a": `{"resource":"` + va + `","authorization_servers":["` + iss + `"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"]}`,
		"/.well-known/oauth-protected-resource/mcp/b": `{"resource":"` + vb + `","authorization_servers":["` + iss + `"],"scopes_supported":["mcp","team-b"],"bearer_methods_supported":["header"]}`,
		"/.well-known/oauth-protected-resource":       "404 page not found\n",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("GET %s: %d %s\nwant %s", path, resp.StatusCode, b, want)
		}
	}
}
