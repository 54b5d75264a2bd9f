package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestUpstreamsExample: the example file of deploy/ is valid (with auth
// on: it has scopes), and reads as it says.
func TestUpstreamsExample(t *testing.T) {
	t.Parallel()
	const example = "../../deploy/upstreams.example.yaml"
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseUpstreams(example, data, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.upstreams) != 2 {
		t.Fatalf("%d upstreams, want 2", len(cfg.upstreams))
	}
	ev, docs := cfg.upstreams[0], cfg.upstreams[1]
	want := upstreamEntry{
		Name: "everything", URL: "http://127.0.0.1:3001/mcp", Prefix: "ev_",
		Include: []string{"echo", "get-*", "add"}, Exclude: []string{"get-secret*"},
		Scopes: []string{"tools:use"}, ToolScopes: map[string][]string{"echo": {"tools:echo"}},
		Versions: []string{"2026-07-28", "2025-11-25"},
		Credentials: credentialsEntry{Kind: "clientCredentials", OAuth: oauthEntry{
			TokenURL: "https://auth.example.com/oauth/token", ClientID: "wymcp-gateway", ClientSecretFile: "secrets/everything.secret",
			Scopes: []string{"mcp:tools"}, Resource: "http://127.0.0.1:3001/mcp",
		}},
		CallTimeout: 60 * time.Second, ConnectTimeout: 10 * time.Second,
		MaxConns: 64, MaxInFlight: 256, MaxResponseBytes: 4194304,
		BreakerMinCalls: 5, BreakerProbeInterval: 5 * time.Second, IdleTimeout: 4 * time.Second,
	}
	if got := exported(ev); !reflect.DeepEqual(got, want) {
		t.Errorf("upstreams[0]:\n got %+v\nwant %+v", got, want)
	}
	if docs.Name != "docs" || docs.Prefix != "" || docs.Credentials.Kind != "headersFile" || docs.Credentials.HeadersFile != "secrets/docs.headers" {
		t.Errorf("upstreams[1]: %+v", exported(docs))
	}
	// Without auth its scopes are refused, naming the line.
	_, err = parseUpstreams(example, data, false)
	if err == nil || !strings.HasPrefix(err.Error(), "-upstreams "+example+":") || !strings.HasSuffix(err.Error(), ": upstreams[0].scopes: needs -auth-issuer: with auth off no caller holds a scope") {
		t.Errorf("without auth: %v", err)
	}
}

// exported is e's exported fields: what the file says.
func exported(e *upstreamEntry) upstreamEntry {
	return upstreamEntry{
		Name: e.Name, URL: e.URL, Prefix: e.Prefix, Include: e.Include, Exclude: e.Exclude,
		Scopes: e.Scopes, ToolScopes: e.ToolScopes, Versions: e.Versions, Credentials: e.Credentials,
		CallTimeout: e.CallTimeout, ConnectTimeout: e.ConnectTimeout, MaxConns: e.MaxConns,
		MaxInFlight: e.MaxInFlight, MaxResponseBytes: e.MaxResponseBytes, BreakerMinCalls: e.BreakerMinCalls,
		BreakerProbeInterval: e.BreakerProbeInterval, RetryIdempotent: e.RetryIdempotent, IdleTimeout: e.IdleTimeout, BreakerDisabled: e.BreakerDisabled, Refresh: e.Refresh,
		AllowCleartextCredentials: e.AllowCleartextCredentials,
	}
}

// TestUpstreamsCleartextCredentials (issue 38): credentials that would go
// over plain http to a host that is not loopback (the upstream's url, or
// a token endpoint) are refused when the file is read, with one line
// naming the key, unless the entry sets allowCleartextCredentials: true,
// which reaches upstream.Options. Only the text is read: nothing is
// resolved or dialled.
func TestUpstreamsCleartextCredentials(t *testing.T) {
	t.Parallel()
	entry := func(url, creds, extra string) string {
		return "upstreams:\n  - name: a\n    url: " + url + "\n    credentials: {" + creds + "}\n" + extra
	}
	const (
		headers = "headersFile: h"
		fix     = "; use https, or set allowCleartextCredentials: true"
	)
	cc := func(tokenURL string) string {
		return "clientCredentials: {tokenURL: '" + tokenURL + "', clientID: gw, clientSecretFile: s}"
	}
	te := func(tokenURL string) string {
		return "tokenExchange: {tokenURL: '" + tokenURL + "', clientID: gw, clientSecretFile: s}"
	}
	for _, tc := range []struct{ file, want string }{
		{entry("http://10.1.2.3/mcp", headers, ""),
			`-upstreams u.yaml:3: upstreams[0].url: "http://10.1.2.3/mcp" is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted` + fix},
		{entry("http://example.com/mcp", cc("https://as.example/token"), ""),
			`-upstreams u.yaml:3: upstreams[0].url: "http://example.com/mcp" is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted` + fix},
		{entry("https://example.com/mcp", cc("http://10.1.2.3/token"), ""),
			`-upstreams u.yaml:4: upstreams[0].credentials.clientCredentials.tokenURL: "http://10.1.2.3/token" is plain http to a host that is not loopback: the client secret would travel unencrypted` + fix},
		{entry("http://127.0.0.1:1/mcp", te("http://example.com/token"), ""),
			`-upstreams u.yaml:4: upstreams[0].credentials.tokenExchange.tokenURL: "http://example.com/token" is plain http to a host that is not loopback: the client secret would travel unencrypted` + fix},
		{entry("http://10.1.2.3/mcp", headers, "    allowCleartextCredentials: yes\n"),
			`-upstreams u.yaml:5: upstreams[0].allowCleartextCredentials: want true or false, got a string "yes"`},
		// Accepted: opted in, loopback, https, or no credentials.
		{entry("http://10.1.2.3/mcp", cc("http://example.com/token"), "    allowCleartextCredentials: true\n"), ""},
		{entry("http://127.0.0.1:8080/mcp", cc("http://localhost:9000/token"), ""), ""},
		{entry("http://[::1]:8080/mcp", headers, ""), ""},
		{entry("https://example.com/mcp", te("https://as.example/token"), ""), ""},
		{"upstreams:\n  - name: a\n    url: http://10.1.2.3/mcp\n", ""},
	} {
		cfg, err := parseUpstreams("u.yaml", []byte(tc.file), true)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		case tc.want == "":
			e := cfg.upstreams[0]
			if got := e.options().AllowCleartextCredentials; got != e.AllowCleartextCredentials || got != strings.Contains(tc.file, "allowCleartextCredentials: true") {
				t.Errorf("%q: upstream.Options.AllowCleartextCredentials %v", tc.file, got)
			}
		}
	}
}

// TestUpstreamsJSON: a JSON file reads as the YAML file it spells out.
func TestUpstreamsJSON(t *testing.T) {
	t.Parallel()
	yamlFile := `
upstreams:
  - name: a
    url: http://127.0.0.1:1/mcp
    prefix: ""
    include: [echo, "get-*"]
    versions: [2025-11-25]
    callTimeout: 2s
    maxInFlight: 8
    breaker: {disabled: true}
    refresh: 1m
  - name: b
    url: https://b.example/mcp
    prefix: b_
    credentials:
      headersFile: b.headers
`
	jsonFile := `{"upstreams": [
  {"name": "a", "url": "http://127.0.0.1:1/mcp", "prefix": "", "include": ["echo", "get-*"], "versions": ["2025-11-25"],
   "callTimeout": "2s", "maxInFlight": 8, "breaker": {"disabled": true}, "refresh": "1m"},
  {"name": "b", "url": "https://b.example/mcp", "prefix": "b_", "credentials": {"headersFile": "b.headers"}}
]}`
	y, err := parseUpstreams("u.yaml", []byte(yamlFile), false)
	if err != nil {
		t.Fatal(err)
	}
	j, err := parseUpstreams("u.json", []byte(jsonFile), false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if y.upstreams[i].fingerprint() != j.upstreams[i].fingerprint() {
			t.Errorf("upstreams[%d]:\nYAML %s\nJSON %s", i, y.upstreams[i].fingerprint(), j.upstreams[i].fingerprint())
		}
	}
	a := y.upstreams[0]
	if a.CallTimeout != 2*time.Second || a.MaxInFlight != 8 || !a.BreakerDisabled || a.Refresh != time.Minute || a.options().BreakerMinCalls != -1 {
		t.Errorf("upstreams[0]: %+v", exported(a))
	}
}

// TestUpstreamsFileErrors: each thing wrong with a file is one line naming
// the file, the line, the key's path and what is wrong.
func TestUpstreamsFileErrors(t *testing.T) {
	t.Parallel()
	const head = "upstreams:\n  - name: a\n    url: http://h/\n"
	for _, tc := range []struct{ file, want string }{
		{"", `-upstreams u.yaml: upstreams: missing (the file is empty; write upstreams: [] for none)`},
		{"# only a comment\n", `-upstreams u.yaml: upstreams: missing (the file is empty; write upstreams: [] for none)`},
		{"- a\n", `-upstreams u.yaml:1: the file must be a mapping with the key upstreams, got a list`},
		{"upstreams: x\n", `-upstreams u.yaml:1: upstreams: want a list, got a string`},
		{"upstreams: []\nextra: 1\n", `-upstreams u.yaml:2: extra: unknown key; the keys here are upstreams`},
		{"upstreams: []\n---\nupstreams: []\n", `-upstreams u.yaml:3: holds a second YAML document; write one`},
		{"upstreams:\n  - name: a\n", `-upstreams u.yaml:2: upstreams[0].url: missing`},
		{"upstreams:\n  - url: http://h/\n", `-upstreams u.yaml:2: upstreams[0].name: missing`},
		{"upstreams:\n  - name: a b\n    url: http://h/\n", `-upstreams u.yaml:2: upstreams[0].name: "a b" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{"upstreams:\n  - {name: a, url: http://h/}\n  - {name: a, url: http://h/}\n", `-upstreams u.yaml:3: upstreams[1].name: "a" is also the name of upstreams[0]; each upstream needs a name of its own`},
		{"upstreams:\n  - {name: a, url: http://h/}\n  - name: b\n    url: ftp://x\n", `-upstreams u.yaml:4: upstreams[1].url: "ftp://x" is not an http or https URL`},
		{"upstreams:\n  - name: a\n    url: http://u:secret@h/\n", `-upstreams u.yaml:3: upstreams[0].url: holds a user name or password; give the upstream's credentials under credentials`},
		{head + "    prefix: 'a:'\n", `-upstreams u.yaml:4: upstreams[0].prefix: "a:" may hold only letters, digits, '_', '.' and '-' (the characters of a tool name)`},
		{head + "    bogus: 1\n", `-upstreams u.yaml:4: upstreams[0].bogus: unknown key; the keys here are name, url, prefix, include, exclude, scopes, toolScopes, versions, credentials, callTimeout, connectTimeout, maxConns, maxInFlight, maxResponseBytes, breaker, retries, idleTimeout, refresh, allowCleartextCredentials`},
		{head + "    calltimeout: 1s\n", `-upstreams u.yaml:4: upstreams[0].calltimeout: unknown key; did you mean callTimeout?`},
		{head + "    callTimeout: 60\n", `-upstreams u.yaml:4: upstreams[0].callTimeout: "60" is not a duration: write a number and a unit, such as 30s or 1m30s`},
		{head + "    connectTimeout: -1s\n", `-upstreams u.yaml:4: upstreams[0].connectTimeout: -1s must be positive`},
		{head + "    maxConns: 1.5\n", `-upstreams u.yaml:4: upstreams[0].maxConns: want an integer, got a number "1.5"`},
		{head + "    maxInFlight: \"64\"\n", `-upstreams u.yaml:4: upstreams[0].maxInFlight: want an integer, got a string "64"`},
		{head + "    maxResponseBytes: 0\n", `-upstreams u.yaml:4: upstreams[0].maxResponseBytes: 0 must be at least 1`},
		{head + "    include: echo\n", `-upstreams u.yaml:4: upstreams[0].include: want a list of strings, got a string`},
		{head + "    exclude:\n      - ok\n      - \"[\"\n", `-upstreams u.yaml:6: upstreams[0].exclude[1]: "[" is not a path.Match pattern`},
		{head + "    versions: [2024-11-05]\n", `-upstreams u.yaml:4: upstreams[0].versions[0]: "2024-11-05" is not one of 2026-07-28, 2025-11-25, 2025-06-18`},
		{head + "    versions: [2025-11-25, 2025-11-25]\n", `-upstreams u.yaml:4: upstreams[0].versions[1]: 2025-11-25 is listed twice`},
		{head + "    versions: []\n", `-upstreams u.yaml:4: upstreams[0].versions: empty; leave versions out for every revision the gateway speaks`},
		{head + "    scopes: [tools]\n", `-upstreams u.yaml:4: upstreams[0].scopes: needs -auth-issuer: with auth off no caller holds a scope`},
		{head + "    toolScopes: {echo: [tools]}\n", `-upstreams u.yaml:4: upstreams[0].toolScopes: needs -auth-issuer: with auth off no caller holds a scope`},
		{head + "    credentials: {headersFile: x, clientCredentials: {}}\n", `-upstreams u.yaml:4: upstreams[0].credentials.clientCredentials: credentials already has headersFile; give one kind`},
		{head + "    credentials: {}\n", `-upstreams u.yaml:4: upstreams[0].credentials: empty; give one of headersFile, clientCredentials, tokenExchange, or leave credentials out`},
		{head + "    credentials:\n      clientCredentials:\n        tokenURL: http://t/\n        clientID: c\n        clientSecret: s3cr3t\n",
			`-upstreams u.yaml:8: upstreams[0].credentials.clientCredentials.clientSecret: secrets are never written in this file: put the secret in a file and name it with clientSecretFile`},
		{head + "    credentials:\n      clientCredentials:\n        tokenURL: http://t/\n        clientID: c\n", `-upstreams u.yaml:6: upstreams[0].credentials.clientCredentials.clientSecretFile: missing`},
		{head + "    credentials:\n      clientCredentials: {tokenURL: 't', clientID: c, clientSecretFile: f}\n", `-upstreams u.yaml:5: upstreams[0].credentials.clientCredentials.tokenURL: "t" is not an http or https URL`},
		{head + "    credentials:\n      clientCredentials: {tokenURL: http://t/, clientID: c, clientSecretFile: f, audience: x}\n",
			`-upstreams u.yaml:5: upstreams[0].credentials.clientCredentials.audience: is a token-exchange parameter; a client-credentials token names its upstream with resource`},
		{head + "    credentials:\n      tokenExchange: {tokenURL: http://t/, clientID: c, clientSecretFile: f}\n",
			`-upstreams u.yaml:5: upstreams[0].credentials.tokenExchange: needs -auth-issuer: it exchanges the caller's token, and with auth off a call has none`},
		{head + "    refresh: 10ms\n", `-upstreams u.yaml:4: upstreams[0].refresh: 10ms is below 1s (0: the upstream's ttlMs)`},
		{head + "    breaker: {disabled: true, minCalls: 2}\n", `-upstreams u.yaml:4: upstreams[0].breaker.minCalls: the breaker is disabled; give minCalls and probeInterval, or disabled: true, not both`},
		{head + "    retries: {always: true}\n", `-upstreams u.yaml:4: upstreams[0].retries.always: unknown key; the keys here are idempotent`},
		{head + "    idleTimeout: -1s\n", `-upstreams u.yaml:4: upstreams[0].idleTimeout: -1s must be positive`},
		{head + "    breaker: {disabled: yes}\n", `-upstreams u.yaml:4: upstreams[0].breaker.disabled: want true or false, got a string "yes"`},
		{head + "   bad: x\n", `-upstreams u.yaml:4: not valid YAML: value is not allowed in this context`},
		{"upstreams:\n  - name: a\n    name: b\n", `-upstreams u.yaml:3: not valid YAML: mapping key "name" already defined at [2:5]`},
		{"upstreams:\n\t- name: a\n", `-upstreams u.yaml:2: not valid YAML: a tab in the indentation; YAML indents with spaces`},
		{"upstreams:\n  - *nope\n", `-upstreams u.yaml:2: upstreams[0]: the alias *nope names no anchor`},
		{`{"upstreams": [{"name": "a", "url": "http://h/"}]`, `-upstreams u.yaml:1: not valid YAML: could not find flow mapping end token '}'`},
	} {
		_, err := parseUpstreams("u.yaml", []byte(tc.file), false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}

	// Anchors and merge keys are YAML: an entry may take another's keys.
	cfg, err := parseUpstreams("u.yaml", []byte("upstreams:\n  - &base {name: a, url: 'http://h/', maxConns: 3}\n  - <<: *base\n    name: b\n"), false)
	if err != nil || len(cfg.upstreams) != 2 || cfg.upstreams[1].Name != "b" || cfg.upstreams[1].MaxConns != 3 {
		t.Errorf("merge key: %v", err)
	}
}

// TestUpstreamsCredentialFiles: the files credentials name are read at
// load, relative to the file's directory, and their errors name the key.
func TestUpstreamsCredentialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("good.headers", "# the key\nX-Api-Key: k1\n")
	write("bad.headers", "X-Api-Key k1\n")
	write("empty.secret", " \n")
	write("good.secret", "s3cr3t\n")
	for _, tc := range []struct{ creds, want string }{
		{"headersFile: good.headers", ""},
		{"clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: good.secret}", ""},
		{"headersFile: missing.headers", `:4: upstreams[0].credentials.headersFile: open ` + filepath.Join(dir, "missing.headers") + `: no such file or directory`},
		{"headersFile: bad.headers", `:4: upstreams[0].credentials.headersFile: ` + filepath.Join(dir, "bad.headers") + `: line 1: not a "Name: value" line`},
		{"clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: empty.secret}", `:4: upstreams[0].credentials.clientCredentials.clientSecretFile: ` + filepath.Join(dir, "empty.secret") + ` is empty`},
		{"clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: " + filepath.Join(dir, "none") + "}", `:4: upstreams[0].credentials.clientCredentials.clientSecretFile: open ` + filepath.Join(dir, "none") + `: no such file or directory`},
	} {
		file := write("u.yaml", "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    credentials: {"+tc.creds+"}\n")
		cfg, err := loadUpstreams(file, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.creds, err)
		case tc.want == "" && (cfg.upstreams[0].creds == nil || cfg.upstreams[0].digest == ""):
			t.Errorf("%s: no credentials built", tc.creds)
		case tc.want != "" && (err == nil || err.Error() != "-upstreams "+file+tc.want):
			t.Errorf("%s:\n got %v\nwant -upstreams %s%s", tc.creds, err, file, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("an error shows the secret: %v", err)
		}
	}

	// A rotated secret changes the entry's fingerprint: a reload
	// reconnects the upstream.
	file := write("u.yaml", "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    credentials: {headersFile: good.headers}\n")
	before, err := loadUpstreams(file, false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadUpstreams(file, false)
	if err != nil {
		t.Fatal(err)
	}
	write("good.headers", "X-Api-Key: k2\n")
	after, err := loadUpstreams(file, false)
	if err != nil {
		t.Fatal(err)
	}
	if before.upstreams[0].fingerprint() != again.upstreams[0].fingerprint() || before.upstreams[0].fingerprint() == after.upstreams[0].fingerprint() {
		t.Error("the fingerprint does not follow the headers file")
	}
}

// TestUpstreamsFlag: a bad file, or -tools none without one, is a bad
// command line: exit status 2 and one line on stderr.
func TestUpstreamsFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n  - name: b\n    url: ftp://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-upstreams", bad}, "wymcp: -upstreams " + bad + `:5: upstreams[1].url: "ftp://x" is not an http or https URL` + "\n"},
		{[]string{"-upstreams", filepath.Join(dir, "none.yaml")}, "wymcp: -upstreams " + filepath.Join(dir, "none.yaml") + ": open " + filepath.Join(dir, "none.yaml") + ": no such file or directory\n"},
		{[]string{"-tools", "none"}, "wymcp: -tools none needs -upstreams: there would be no tool to serve\n"},
	} {
		var stdout, stderr strings.Builder
		err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tc.args...), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", tc.args, code)
		}
		if stderr.String() != tc.want || stdout.Len() != 0 {
			t.Errorf("%q: stderr %q, stdout %q; want stderr %q", tc.args, stderr.String(), stdout.String(), tc.want)
		}
	}
}
