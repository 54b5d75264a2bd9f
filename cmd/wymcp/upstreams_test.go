package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// TestUpstreamsCleartextCredentials (issue 38): credentials that would go
// over plain http to a host that is not loopback (the upstream's url, or
// a token endpoint) are refused when the file is loaded (the rule of
// upstream.Options.Validate), with one line naming the key, unless the
// entry sets allowCleartextCredentials: true, which reaches
// upstream.Options. Only the text is read: nothing is resolved or
// dialled.
func TestUpstreamsCleartextCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{"h": "X-Api-Key: k\n", "s": "s3cr3t\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(url, creds, extra string) string {
		return "upstreams:\n  - name: a\n    url: " + url + "\n    credentials: {" + creds + "}\n" + extra
	}
	const (
		headers = "headersFile: h"
		fix     = "; use https, or allow cleartext credentials"
		secret  = "the client secret (and, for an exchange, the caller's token) would travel unencrypted"
	)
	cc := func(tokenURL string) string {
		return "clientCredentials: {tokenURL: '" + tokenURL + "', clientID: gw, clientSecretFile: s}"
	}
	te := func(tokenURL string) string {
		return "tokenExchange: {tokenURL: '" + tokenURL + "', clientID: gw, clientSecretFile: s}"
	}
	for _, tc := range []struct{ file, want string }{
		{entry("http://10.1.2.3/mcp", headers, ""),
			`:3: upstreams[0].url: "http://10.1.2.3/mcp" is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted` + fix},
		{entry("http://example.com/mcp", cc("https://as.example/token"), ""),
			`:3: upstreams[0].url: "http://example.com/mcp" is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted` + fix},
		{entry("https://example.com/mcp", cc("http://10.1.2.3/token"), ""),
			`:4: upstreams[0].credentials.clientCredentials.tokenURL: "http://10.1.2.3/token" is plain http to a host that is not loopback: ` + secret + fix},
		{entry("http://127.0.0.1:1/mcp", te("http://example.com/token"), ""),
			`:4: upstreams[0].credentials.tokenExchange.tokenURL: "http://example.com/token" is plain http to a host that is not loopback: ` + secret + fix},
		{entry("http://10.1.2.3/mcp", headers, "    allowCleartextCredentials: yes\n"),
			`:5: upstreams[0].allowCleartextCredentials: want true or false`},
		// Accepted: opted in, loopback, https, or no credentials.
		{entry("http://10.1.2.3/mcp", cc("http://example.com/token"), "    allowCleartextCredentials: true\n"), ""},
		{entry("http://127.0.0.1:8080/mcp", cc("http://localhost:9000/token"), ""), ""},
		{entry("http://[::1]:8080/mcp", headers, ""), ""},
		{entry("https://example.com/mcp", te("https://as.example/token"), ""), ""},
		{"upstreams:\n  - name: a\n    url: http://10.1.2.3/mcp\n", ""},
	} {
		file := filepath.Join(dir, "u.yaml")
		if err := os.WriteFile(file, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadUpstreams(file, true)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want != "" && (err == nil || err.Error() != "-upstreams "+file+tc.want):
			t.Errorf("%q:\n got %v\nwant -upstreams %s%s", tc.file, err, file, tc.want)
		case tc.want == "":
			if got := cfg.upstreams[0].options().AllowCleartextCredentials; got != strings.Contains(tc.file, "allowCleartextCredentials: true") {
				t.Errorf("%q: upstream.Options.AllowCleartextCredentials %v", tc.file, got)
			}
		}
	}
}

// TestUpstreamsFileErrors: each thing wrong with a file is one line naming
// the file, the line, the key's path and what is wrong: go-yaml's strict
// decode (unknown and repeated keys, types), the file's own rules, and
// upstream.Options.Validate's, at the key that set the field.
func TestUpstreamsFileErrors(t *testing.T) {
	t.Parallel()
	const head = "upstreams:\n  - name: a\n    url: http://h/\n"
	const unsupported = "anchors, aliases, merge keys (<<) and tags are not supported: write each value out"
	for _, tc := range []struct{ file, want string }{
		{"", `-upstreams u.yaml: upstreams: missing (the file is empty; write upstreams: [] for none)`},
		{"# only a comment\n", `-upstreams u.yaml: upstreams: missing (the file is empty; write upstreams: [] for none)`},
		{"servers: []\n", `-upstreams u.yaml:1: upstreams: missing (write upstreams: [] for none)`},
		{"- a\n", `-upstreams u.yaml:1: sequence was used where mapping is expected`},
		{"upstreams: x\n", `-upstreams u.yaml:1: upstreams: string was used where sequence is expected`},
		{"upstreams: []\nextra: 1\n", `-upstreams u.yaml:2: extra: unknown key`},
		{"upstreams: []\n---\nupstreams: []\n", `-upstreams u.yaml:3: holds a second YAML document; write one`},
		{"upstreams:\n  - name: a\n", `-upstreams u.yaml:2: upstreams[0].url: is required`},
		{"upstreams:\n  - url: http://h/\n", `-upstreams u.yaml:2: upstreams[0].name: is required`},
		{"upstreams:\n  - 5\n", `-upstreams u.yaml:2: upstreams[0]: int was used where mapping is expected`},
		{"upstreams:\n  -\n", `-upstreams u.yaml:2: upstreams[0]: want a mapping, got null`},
		{"upstreams:\n  - name: a b\n    url: http://h/\n", `-upstreams u.yaml:2: upstreams[0].name: "a b" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{"upstreams:\n  - {name: a, url: http://h/}\n  - {name: a, url: http://h/}\n", `-upstreams u.yaml:3: upstreams[1].name: "a" is another upstream's`},
		{"upstreams:\n  - {name: a, url: http://h/}\n  - name: b\n    url: ftp://x\n", `-upstreams u.yaml:4: upstreams[1].url: "ftp://x" is not an http or https URL`},
		{"upstreams:\n  - name: a\n    url: http://u:secret@h/\n", `-upstreams u.yaml:3: upstreams[0].url: holds a user name or password; give the upstream's credentials in Credentials`},
		{"upstreams:\n  - name: a\n    url: 'http://h/#x'\n", `-upstreams u.yaml:3: upstreams[0].url: "http://h/#x" has a fragment`},
		{head + "    prefix: 'a:'\n", `-upstreams u.yaml:4: upstreams[0].prefix: "a:" may hold only letters, digits, '_', '.' and '-' (the characters of a tool name), at most 64`},
		{head + "    prefix: [a]\n", `-upstreams u.yaml:4: upstreams[0].prefix: want a string`},
		{head + "    bogus: 1\n", `-upstreams u.yaml:4: upstreams[0].bogus: unknown key`},
		{head + "    calltimeout: 1s\n", `-upstreams u.yaml:4: upstreams[0].calltimeout: unknown key`},
		{head + "    callTimeout: 60\n", `-upstreams u.yaml:4: upstreams[0].callTimeout: want a duration such as 30s`},
		{head + "    callTimeout: 60x\n", `-upstreams u.yaml:4: upstreams[0].callTimeout: "60x" is not a duration: write a number and a unit, such as 30s or 1m30s`},
		{head + "    callTimeout: {a: 1}\n", `-upstreams u.yaml:4: upstreams[0].callTimeout: want a duration such as 30s`},
		{head + "    connectTimeout: -1s\n", `-upstreams u.yaml:4: upstreams[0].connectTimeout: -1s is negative`},
		{head + "    maxConns: 1.5\n", `-upstreams u.yaml:4: upstreams[0].maxConns: want an integer`},
		{head + "    maxConns: 99999999999999999\n", `-upstreams u.yaml:4: upstreams[0].maxConns: 99999999999999999 is too large`},
		{head + "    maxInFlight: \"64\"\n", `-upstreams u.yaml:4: upstreams[0].maxInFlight: want an integer`},
		{head + "    maxResponseBytes: 0\n", `-upstreams u.yaml:4: upstreams[0].maxResponseBytes: 0 must be at least 1`},
		{head + "    include: echo\n", `-upstreams u.yaml:4: upstreams[0].include: string was used where sequence is expected`},
		{head + "    include: [a, {b: 1}]\n", `-upstreams u.yaml:4: upstreams[0].include[1]: want a string`},
		{head + "    exclude:\n      - ok\n      - \"[\"\n", `-upstreams u.yaml:6: upstreams[0].exclude[1]: "[" is not a path.Match pattern`},
		{head + "    versions: [2024-11-05]\n", `-upstreams u.yaml:4: upstreams[0].versions[0]: "2024-11-05" is not one of 2026-07-28, 2025-11-25, 2025-06-18`},
		{head + "    versions: [2025-11-25, 2025-11-25]\n", `-upstreams u.yaml:4: upstreams[0].versions[1]: 2025-11-25 is listed twice`},
		{head + "    versions: []\n", `-upstreams u.yaml:4: upstreams[0].versions: empty; nil means every revision the gateway speaks`},
		{head + "    scopes: [tools]\n", `-upstreams u.yaml:4: upstreams[0].scopes: needs -auth-issuer: with auth off no caller holds a scope`},
		{head + "    toolScopes: {echo: [tools]}\n", `-upstreams u.yaml:4: upstreams[0].toolScopes: needs -auth-issuer: with auth off no caller holds a scope`},
		{head + "    toolScopes: [a]\n", `-upstreams u.yaml:4: upstreams[0].toolScopes: sequence was used where mapping is expected`},
		{head + "    credentials: {headersFile: x, clientCredentials: {}}\n", `-upstreams u.yaml:4: upstreams[0].credentials.clientCredentials: credentials already has headersFile; give one kind`},
		{head + "    credentials: {}\n", `-upstreams u.yaml:4: upstreams[0].credentials: empty; give one of headersFile, clientCredentials, tokenExchange, or leave credentials out`},
		{head + "    credentials:\n      clientCredentials:\n        tokenURL: http://t/\n        clientID: c\n        clientSecret: s3cr3t\n",
			`-upstreams u.yaml:8: upstreams[0].credentials.clientCredentials.clientSecret: secrets are never written in this file: put the secret in a file and name it with clientSecretFile`},
		{head + "    credentials:\n      clientCredentials:\n        tokenURL: http://t/\n        clientID: c\n", `-upstreams u.yaml:5: upstreams[0].credentials.clientCredentials.clientSecretFile: missing`},
		{head + "    credentials:\n      tokenExchange: {tokenURL: http://t/, clientID: c, clientSecretFile: f, Audience: x}\n",
			`-upstreams u.yaml:5: upstreams[0].credentials.tokenExchange.Audience: unknown key`},
		{head + "    credentials:\n      tokenExchange: {tokenURL: http://t/, clientID: c, clientSecretFile: f}\n",
			`-upstreams u.yaml:5: upstreams[0].credentials.tokenExchange: needs -auth-issuer: it exchanges the caller's token, and with auth off a call has none`},
		{head + "    breaker: {disabled: true, minCalls: 2}\n", `-upstreams u.yaml:4: upstreams[0].breaker.minCalls: the breaker is disabled; give minCalls and probeInterval, or disabled: true, not both`},
		{head + "    breaker: 5\n", `-upstreams u.yaml:4: upstreams[0].breaker: int was used where mapping is expected`},
		{head + "    retries: {always: true}\n", `-upstreams u.yaml:4: upstreams[0].retries.always: unknown key`},
		{head + "    idleTimeout: -1s\n", `-upstreams u.yaml:4: upstreams[0].idleTimeout: -1s is negative`},
		{head + "    breaker: {disabled: yes}\n", `-upstreams u.yaml:4: upstreams[0].breaker.disabled: want true or false`},
		{head + "    refresh: 10ms\n", `-upstreams u.yaml:4: upstreams[0].refresh: 10ms is below 1s (0: the upstream's ttlMs)`},
		{head + "    refresh: -1m\n", `-upstreams u.yaml:4: upstreams[0].refresh: -1m0s is negative`},
		{head + "    overrides: [echo]\n", `-upstreams u.yaml:4: upstreams[0].overrides: sequence was used where mapping is expected`},
		{head + "    overrides: {echo: {}}\n", `-upstreams u.yaml:4: upstreams[0].overrides.echo: changes nothing; leave it out`},
		{head + "    overrides: {'': {title: x}}\n", `-upstreams u.yaml:4: upstreams[0].overrides.'': names no tool`},
		{head + "    overrides:\n      echo: {name: 'a b'}\n", `-upstreams u.yaml:5: upstreams[0].overrides.echo.name: "a b" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{head + "    overrides:\n      a: {name: x}\n      'b.c': {name: 'x y'}\n", `-upstreams u.yaml:6: upstreams[0].overrides.'b.c'.name: "x y" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{head + "    overrides:\n      echo: {omit: true}\n", `-upstreams u.yaml:5: upstreams[0].overrides.echo.omit: unknown key`},
		{head + "    overrides:\n      echo:\n        annotations: {readOnlyHint: yes}\n", `-upstreams u.yaml:6: upstreams[0].overrides.echo.annotations.readOnlyHint: want true or false`},
		{head + "    overrides:\n      echo:\n        annotations: {readonlyHint: true}\n", `-upstreams u.yaml:6: upstreams[0].overrides.echo.annotations.readonlyHint: unknown key`},
		{head + "    overrides:\n      echo:\n        description: [a]\n", `-upstreams u.yaml:6: upstreams[0].overrides.echo.description: want a string`},
		{head + "    command: x\n", `-upstreams u.yaml:4: upstreams[0].command: is given with a URL: an upstream is a program the gateway runs or a server at a URL, not both`},
		{"upstreams:\n  - name: a\n    command: x\n    env: {'A=B': c}\n", `-upstreams u.yaml:4: upstreams[0].env.A=B: is not an environment variable's name (letters, digits and '_', not first a digit)`},
		{"upstreams:\n  - name: a\n    command: x\n    args: x\n", `-upstreams u.yaml:4: upstreams[0].args: string was used where sequence is expected`},
		{"upstreams:\n  - name: a\n    command: x\n    sessions: each\n", `-upstreams u.yaml:4: upstreams[0].sessions: "each" is neither shared nor perCaller`},
		{"upstreams:\n  - name: a\n    command: x\n    maxCallers: 3\n", `-upstreams u.yaml:4: upstreams[0].maxCallers: applies only with sessions: perCaller`},
		{"upstreams:\n  - name: a\n    command: x\n    maxConns: 3\n", `-upstreams u.yaml:4: upstreams[0].maxConns: an upstream the gateway runs has one pipe, not connections (MaxInFlight bounds its calls)`},
		{head + "    maxCallers: 3\n", `-upstreams u.yaml:4: upstreams[0].maxCallers: applies only with sessions: perCaller`},
		{head + "    env: {A: b}\n", `-upstreams u.yaml:4: upstreams[0].env: is for an upstream the gateway runs (Command), not one at a URL`},
		{head + "   bad: x\n", `-upstreams u.yaml:4: not valid YAML: value is not allowed in this context`},
		{"upstreams:\n  - name: a\n    name: b\n", `-upstreams u.yaml:3: not valid YAML: mapping key "name" already defined at [2:5]`},
		{"upstreams:\n\t- name: a\n", `-upstreams u.yaml:2: not valid YAML: a tab in the indentation; YAML indents with spaces`},
		{`{"upstreams": [{"name": "a", "url": "http://h/"}]`, `-upstreams u.yaml:1: not valid YAML: could not find flow mapping end token '}'`},
		// Anchors, aliases, merge keys and tags are refused: an alias
		// repeats what it names without its bytes; go-yaml's decoder
		// panics on some tags.
		{"upstreams:\n  - *nope\n", `-upstreams u.yaml:2: upstreams[0]: ` + unsupported},
		{"upstreams:\n  - &base {name: a, url: 'http://h/'}\n", `-upstreams u.yaml:2: upstreams[0]: ` + unsupported},
		{head + "    <<: {maxConns: 3}\n", `-upstreams u.yaml:4: upstreams[0].<<: ` + unsupported},
		{head + "    include: !!str a\n", `-upstreams u.yaml:4: upstreams[0].include: ` + unsupported},
	} {
		_, err := parseUpstreams("u.yaml", []byte(tc.file), false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
	// With auth on.
	for _, tc := range []struct{ file, want string }{
		{head + "    toolScopes: {'a.b': []}\n", `-upstreams u.yaml:4: upstreams[0].toolScopes.'a.b': no scope; leave the tool out instead`},
		{head + "    toolScopes:\n      echo: [a, 'b c']\n", `-upstreams u.yaml:5: upstreams[0].toolScopes.echo[1]: "b c" is not an OAuth scope: printable ASCII without space, '"' or '\' (RFC 6749 §3.3)`},
		{head + "    scopes: [a, '']\n", `-upstreams u.yaml:4: upstreams[0].scopes[1]: "" is not an OAuth scope: printable ASCII without space, '"' or '\' (RFC 6749 §3.3)`},
	} {
		_, err := parseUpstreams("u.yaml", []byte(tc.file), true)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}

// A stdio upstream's dir is relative to the file's directory.
func TestUpstreamsStdioDir(t *testing.T) {
	t.Parallel()
	cfg, err := parseUpstreams("/srv/gw/u.yaml", []byte("upstreams:\n  - {name: a, command: x, dir: data}\n  - {name: b, command: x, dir: /abs}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cfg.upstreams[0].options().Dir, cfg.upstreams[1].options().Dir; a != "/srv/gw/data" || b != "/abs" {
		t.Fatalf("dirs %q, %q", a, b)
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
		// What upstream.ClientCredentials and TokenExchange refuse, at the
		// key of the field they name.
		{"clientCredentials: {tokenURL: 't', clientID: gw, clientSecretFile: good.secret}", `:4: upstreams[0].credentials.clientCredentials.tokenURL: must be an http or https URL`},
		{"clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: good.secret, audience: x}",
			`:4: upstreams[0].credentials.clientCredentials.audience: is a token-exchange parameter; use Resource`},
		{"tokenExchange: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: good.secret, resource: 'a#b'}",
			`:4: upstreams[0].credentials.tokenExchange.resource: must be an absolute URI without a fragment (RFC 8707)`},
		{"clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: " + filepath.Join(dir, "none") + "}", `:4: upstreams[0].credentials.clientCredentials.clientSecretFile: open ` + filepath.Join(dir, "none") + `: no such file or directory`},
	} {
		file := write("u.yaml", "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    credentials: {"+tc.creds+"}\n")
		cfg, err := loadUpstreams(file, true)
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

// TestUpstreamsPerCallerURL: sessions: perCaller with a url gives each
// caller its own session of a 2025-era upstream (docs/design.md §10d).
func TestUpstreamsPerCallerURL(t *testing.T) {
	t.Parallel()
	cfg, err := parseUpstreams("u.yaml", []byte("upstreams:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n    sessions: perCaller\n    maxCallers: 8\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.upstreams[0].options(); !o.PerCaller || o.MaxCallers != 8 || o.URL != "http://127.0.0.1:9/mcp" {
		t.Fatalf("options %+v", o)
	}
}

// TestUpstreamsExample: the example file of deploy/ is valid (with auth
// on: it has scopes), and reads as it says, every key.
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
	if len(cfg.upstreams) != 3 {
		t.Fatalf("%d upstreams, want 3", len(cfg.upstreams))
	}
	wantStdio := upstream.Options{Name: "memory", Prefix: "mem_", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"},
		Env: map[string]string{"MEMORY_FILE_PATH": "/var/lib/wymcp/memory/${WYMCP_CALLER}.jsonl"}, InheritEnv: []string{"HOME"},
		Dir: "/var/lib/wymcp", PerCaller: true, MaxCallers: 64}
	if got := cfg.upstreams[2].options(); !reflect.DeepEqual(got, wantStdio) {
		t.Errorf("upstreams[2]:\n got %+v\nwant %+v", got, wantStdio)
	}
	ev, docs := cfg.upstreams[0], cfg.upstreams[1]
	yes, no := true, false
	want := upstream.Options{
		Name: "everything", URL: "http://127.0.0.1:3001/mcp", Prefix: "ev_",
		Include: []string{"echo", "get-*", "add"}, Exclude: []string{"get-secret*"},
		Scopes: []string{"tools:use"}, ToolScopes: map[string][]string{"echo": {"tools:echo"}},
		Versions:    []string{"2026-07-28", "2025-11-25"},
		CallTimeout: 60 * time.Second, ConnectTimeout: 10 * time.Second,
		MaxConns: 64, MaxInFlight: 256, MaxResponseBytes: 4194304,
		BreakerMinCalls: 5, BreakerProbeInterval: 5 * time.Second, IdleTimeout: 4 * time.Second,
		Overrides: map[string]upstream.Override{"echo": {Name: "say", Title: "Say it back", Description: "Returns the message it is given.",
			Annotations: &protocol.ToolAnnotations{ReadOnlyHint: &yes, OpenWorldHint: &no}}},
	}
	if got := ev.options(); !reflect.DeepEqual(got, want) {
		t.Errorf("upstreams[0]:\n got %+v\nwant %+v", got, want)
	}
	wantCreds := &credentialsEntry{ClientCredentials: &oauthEntry{
		TokenURL: "https://auth.example.com/oauth/token", ClientID: "wymcp-gateway", ClientSecretFile: "secrets/everything.secret",
		Scopes: []string{"mcp:tools"}, Resource: "http://127.0.0.1:3001/mcp",
	}}
	if !reflect.DeepEqual(ev.Credentials, wantCreds) || ev.AllowCleartextCredentials || ev.Retries.Idempotent || ev.Refresh != 0 {
		t.Errorf("upstreams[0]: %+v", ev)
	}
	if got := docs.options(); got.Name != "docs" || got.Prefix != "" || docs.Credentials.HeadersFile != "secrets/docs.headers" {
		t.Errorf("upstreams[1]: %+v", got)
	}
	wantServers := []*serverEntry{
		{Path: "/mcp/dev", Tools: []string{"say", "ev_get-*", "search_docs"}, Name: "dev-tools", Scopes: []string{"tools:dev"}},
		{Path: "/mcp/docs", Tools: []string{"search_*"}},
	}
	if !reflect.DeepEqual(cfg.servers, wantServers) {
		t.Errorf("servers: %+v", cfg.servers)
	}
	// Without auth its scopes are refused, naming the line.
	_, err = parseUpstreams(example, data, false)
	if err == nil || !strings.HasPrefix(err.Error(), "-upstreams "+example+":") || !strings.HasSuffix(err.Error(), ": upstreams[0].scopes: needs -auth-issuer: with auth off no caller holds a scope") {
		t.Errorf("without auth: %v", err)
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
    overrides: {echo: {name: say, annotations: {readOnlyHint: true}}}
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
servers:
  - {path: /mcp/a, tools: [say]}
`
	jsonFile := `{"upstreams": [
  {"name": "a", "url": "http://127.0.0.1:1/mcp", "prefix": "", "include": ["echo", "get-*"],
   "overrides": {"echo": {"name": "say", "annotations": {"readOnlyHint": true}}}, "versions": ["2025-11-25"],
   "callTimeout": "2s", "maxInFlight": 8, "breaker": {"disabled": true}, "refresh": "1m"},
  {"name": "b", "url": "https://b.example/mcp", "prefix": "b_", "credentials": {"headersFile": "b.headers"}}
], "servers": [{"path": "/mcp/a", "tools": ["say"]}]}`
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
	if !reflect.DeepEqual(y.servers, j.servers) {
		t.Errorf("servers: %+v, %+v", y.servers, j.servers)
	}
	a := y.upstreams[0]
	if o := a.options(); o.CallTimeout != 2*time.Second || o.MaxInFlight != 8 || o.BreakerMinCalls != -1 || o.Refresh != time.Minute || a.Versions[0] != "2025-11-25" ||
		o.Overrides["echo"].Name != "say" || !*o.Overrides["echo"].Annotations.ReadOnlyHint {
		t.Errorf("upstreams[0]: %+v", o)
	}
	// A reload compares the overrides too.
	other, err := parseUpstreams("u.yaml", []byte(strings.Replace(yamlFile, "name: say", "name: tell", 1)), false)
	if err != nil || other.upstreams[0].fingerprint() == a.fingerprint() {
		t.Errorf("an override changed, the fingerprint did not: %v", err)
	}
}

// TestUpstreamsServers (issue 40): servers are views, each its own path:
// one line naming what is wrong with one.
func TestUpstreamsServers(t *testing.T) {
	t.Parallel()
	const head = "upstreams: []\nservers:\n"
	for _, tc := range []struct {
		file   string
		authOn bool
		want   string
	}{
		{head + "  - {path: /mcp/a, tools: [a, 'b_*'], name: A, scopes: [s]}\n  - {path: /mcp/b}\n", true, ""},
		{head + "  - {tools: [a]}\n", false, `-upstreams u.yaml:3: servers[0].path: missing`},
		{head + "  - path: mcp\n", false, `-upstreams u.yaml:3: servers[0].path: "mcp" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{head + "  - path: /mcp/{x}\n", false, `-upstreams u.yaml:3: servers[0].path: "/mcp/{x}" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{head + "  - path: /mcp a\n", false, `-upstreams u.yaml:3: servers[0].path: "/mcp a" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{head + "  - path: /mcp/\n", false, `-upstreams u.yaml:3: servers[0].path: "/mcp/" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{head + "  - path: /a//b\n", false, `-upstreams u.yaml:3: servers[0].path: "/a//b" is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'`},
		{head + "  - path: /readyz\n", false, `-upstreams u.yaml:3: servers[0].path: /readyz is the binary's own endpoint`},
		{head + "  - path: /healthz\n", false, `-upstreams u.yaml:3: servers[0].path: /healthz is the binary's own endpoint`},
		{head + "  - path: /a\n  - path: /b\n  - path: /a\n", false, `-upstreams u.yaml:5: servers[2].path: "/a" is another view's`},
		{head + "  - path: /a\n    tools: ['[']\n", false, `-upstreams u.yaml:4: servers[0].tools[0]: "[" is not a served name nor a path.Match pattern`},
		{head + "  - path: /a\n    tools: a\n", false, `-upstreams u.yaml:4: servers[0].tools: string was used where sequence is expected`},
		{head + "  - path: /a\n    scopes: [s]\n", false, `-upstreams u.yaml:4: servers[0].scopes: needs -auth-issuer: with auth off no caller holds a scope`},
		{head + "  - path: /a\n    scopes: ['a b']\n", true, `-upstreams u.yaml:4: servers[0].scopes[0]: "a b" is not an OAuth scope: printable ASCII without space, '"' or '\' (RFC 6749 §3.3)`},
		{head + "  - path: /a\n    view: x\n", false, `-upstreams u.yaml:4: servers[0].view: unknown key`},
		{head + "  -\n", false, `-upstreams u.yaml:3: servers[0]: want a mapping, got null`},
		{"upstreams: []\nservers: {path: /a}\n", false, `-upstreams u.yaml:2: servers: mapping was used where sequence is expected`},
	} {
		cfg, err := parseUpstreams("u.yaml", []byte(tc.file), tc.authOn)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.file, err)
		case tc.want == "" && (len(cfg.servers) != 2 || cfg.servers[0].Name != "A" || cfg.servers[1].Path != "/mcp/b"):
			t.Errorf("%q: %+v", tc.file, cfg.servers)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}

// hostileFiles are files made to cost: each is refused at once, with one
// line, before go-yaml spends its time (or its memory) on it.
func hostileFiles() map[string]string {
	var laughs strings.Builder // a billion strings in 1 KB, aliases expanded
	laughs.WriteString("upstreams:\n  - name: a\n    url: http://h/\n    scopes: &a [s, s, s, s, s, s, s, s, s, s]\n")
	for i, prev := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		next := string(rune('b' + i))
		fmt.Fprintf(&laughs, "    x%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", next, next, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	const unsupported = "anchors, aliases, merge keys (<<) and tags are not supported: write each value out"
	const shape = "lists and mappings nest more than 64 deep, or the file has more than 50000 of them, keys and items"
	return map[string]string{
		laughs.String(): "-upstreams u.yaml:4: upstreams[0].scopes: " + unsupported,
		"upstreams: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000):                                    "-upstreams u.yaml: " + shape,
		"upstreams: " + strings.Repeat("{a: ", 65) + "1" + strings.Repeat("}", 65):                                     "-upstreams u.yaml: " + shape,
		"upstreams:\n" + strings.Repeat("- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n", 2000): "-upstreams u.yaml: " + shape,
		"upstreams: [" + strings.Repeat("{}, ", 60_000) + "]":                                                          "-upstreams u.yaml: " + shape,
		"upstreams:\n" + strings.Repeat("-\n", 30_000):                                                                 "-upstreams u.yaml:2: upstreams: 30000 items, more than 1000",
		"upstreams: []\n" + strings.Repeat("#\n", 60_000):                                                              "-upstreams u.yaml: more than 50000 lines",
		// go-yaml's decoder panicked on a tag where a list belongs.
		"upstreams:\n  ! 00000":             "-upstreams u.yaml:2: upstreams: " + unsupported,
		"upstreams:\n  - !!map x\n":         "-upstreams u.yaml:2: not valid YAML: could not find map",
		"upstreams:\n  - {name: !!int a}\n": "-upstreams u.yaml:2: upstreams[0].name: " + unsupported,
	}
}

// TestUpstreamsHostile (issue 40): aliases (and with them the billion
// laughs), tags, deep nesting and files of many small things are refused
// with one line; [ nested 64 deep is not.
func TestUpstreamsHostile(t *testing.T) {
	t.Parallel()
	for file, want := range hostileFiles() {
		if _, err := parseUpstreams("u.yaml", []byte(file), true); err == nil || err.Error() != want {
			t.Errorf("%.60q:\n got %v\nwant %s", file, err, want)
		}
	}
	if _, err := parseUpstreams("u.yaml", []byte("upstreams: "+strings.Repeat("[", 64)+strings.Repeat("]", 64)), true); err == nil || strings.Contains(err.Error(), "nest") {
		t.Errorf("64 deep: %v", err)
	}
}

// FuzzUpstreamsFile: any bytes read as an -upstreams file give a config
// upstream.Options.Validate accepts, or one *configError of one line
// naming the file, never a panic (not even one parseUpstreams recovers).
func FuzzUpstreamsFile(f *testing.F) {
	for _, name := range []string{"upstreams.example.yaml", "policy.example.yaml"} {
		if example, err := os.ReadFile("../../deploy/" + name); err == nil {
			f.Add(example)
		}
	}
	for file := range hostileFiles() {
		f.Add([]byte(file))
	}
	for _, s := range []string{
		"upstreams: []\n",
		"upstreams:\n  - &base {name: a, url: 'http://h/', maxConns: 3}\n  - <<: *base\n    name: b\n",
		`{"upstreams": [{"name": "a", "url": "http://h/", "breaker": {"disabled": true}, "refresh": "1m"}], "servers": [{"path": "/a"}]}`,
		"upstreams:\n  - name: s\n    command: /bin/cat\n    args: [a, '${WYMCP_CALLER}']\n    env: {A: b}\n    inheritEnv: [HOME]\n    sessions: perCaller\n    allow: 'caller.sub != \"\"'\n    rateLimit: {calls: 5, per: 1m}\n",
		"upstreams:\n  - name: a\n    url: https://h/\n    toolScopes: {echo: [x]}\n    overrides: {'a.b': {name: c}}\n    credentials:\n      tokenExchange: {tokenURL: https://t/, clientID: c, clientSecretFile: f, audience: x, scopes: [s]}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseUpstreams("u.yaml", data, true)
		if err == nil {
			for _, e := range cfg.upstreams {
				if o := e.options(); o.Validate() != nil {
					t.Fatalf("accepted %q: %v", data, o.Validate())
				}
			}
			return
		}
		var ce *configError
		msg := err.Error()
		if !errors.As(err, &ce) || !strings.HasPrefix(msg, "-upstreams u.yaml") || strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, "cannot be read as YAML (") {
			t.Fatalf("%q: %v", data, err)
		}
	})
}
