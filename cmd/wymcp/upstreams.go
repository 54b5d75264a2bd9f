package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/wymcp/wymcp/internal/cleartext"
	"github.com/wymcp/wymcp/upstream"
)

// The -upstreams file: the upstream MCP servers whose tools the binary
// serves beside (or, with -tools none, instead of) a tool set. It is YAML,
// so JSON is accepted too; deploy/upstreams.example.yaml documents every
// key. It is read strictly: an unknown key, a value of the wrong type, a
// missing required key or a bad value is an error naming the line, the
// key's path (upstreams[1].url) and what is wrong, on one line. At start
// that is a bad command line (exit status 2); on SIGHUP the error is
// logged and nothing changes (gateway.go).
//
// The file is read with go-yaml's parser and decoded here, node by node,
// rather than by go-yaml's decoder into tagged structs: the decoder names
// neither the key path of a bad value nor the right field (and it turns
// 1.5 into 1, "64" into 64), and only the parse tree knows the lines.

// maxUpstreamsFile bounds the file: a configuration, not a file given by
// mistake.
const maxUpstreamsFile = 1 << 20

// Bounds and defaults the file's values are checked against.
const (
	// minRefresh is the shortest refresh interval the file may ask for:
	// a typo (1ms) must not turn into a tools/list storm. 0 means the
	// upstream's own ttlMs, which it chooses.
	minRefresh = time.Second
	// maxUpstreams bounds the list.
	maxUpstreams = 1000
)

// gatewayRevisions are the revisions the gateway speaks to an upstream
// (upstream.Options.Versions).
var gatewayRevisions = []string{"2026-07-28", "2025-11-25", "2025-06-18"}

// upstreamEntry is one item of the file's upstreams list, checked. Its
// exported fields are what the file says (and what a reload compares);
// zero means "not set": upstream.Options' default.
type upstreamEntry struct {
	Name, URL, Prefix        string
	Include, Exclude, Scopes []string
	ToolScopes               map[string][]string
	Versions                 []string
	Credentials              credentialsEntry
	CallTimeout              time.Duration
	ConnectTimeout           time.Duration
	MaxConns, MaxInFlight    int
	MaxResponseBytes         int64
	BreakerMinCalls          int
	BreakerProbeInterval     time.Duration
	BreakerDisabled          bool
	RetryIdempotent          bool
	IdleTimeout              time.Duration
	Refresh                  time.Duration
	// AllowCleartextCredentials lets the credentials go over plain http
	// to a host that is not loopback (upstream.Options).
	AllowCleartextCredentials bool

	// index is the entry's place in the list, and lines the line of each
	// key path it set ("" is the entry itself), for errors found later.
	index int
	lines map[string]int
	// creds are the credentials built by load, and digest a hash of the
	// files they were read from: a reload that finds a file changed (a
	// rotated secret) reconnects the upstream.
	creds  upstream.Credentials
	digest string
}

// credentialsEntry is an entry's credentials: at most one kind.
type credentialsEntry struct {
	// Kind is "" (none), "headersFile", "clientCredentials" or
	// "tokenExchange".
	Kind        string
	HeadersFile string
	OAuth       oauthEntry
}

// oauthEntry is clientCredentials or tokenExchange.
type oauthEntry struct {
	TokenURL, ClientID, ClientSecretFile string
	Scopes                               []string
	Resource, Audience                   string
}

// upstreamsConfig is the file, checked.
type upstreamsConfig struct {
	// file is the path as given to -upstreams.
	file      string
	upstreams []*upstreamEntry
	servers   []*serverEntry
}

// serverEntry is one item of the file's servers: list, a view (gateway.go).
type serverEntry struct {
	Path, Name    string
	Tools, Scopes []string
}

// configError is one thing wrong with the file: where, and what.
type configError struct {
	file string
	line int    // 0: unknown
	path string // the key path, "" for the file as a whole
	msg  string
}

func (e *configError) Error() string {
	var b strings.Builder
	b.WriteString("-upstreams ")
	b.WriteString(e.file)
	if e.line > 0 {
		fmt.Fprintf(&b, ":%d", e.line)
	}
	b.WriteString(": ")
	if e.path != "" {
		b.WriteString(e.path)
		b.WriteString(": ")
	}
	b.WriteString(e.msg)
	// One line, whatever a wrapped error says.
	return oneLine.Replace(b.String())
}

// oneLine turns line breaks into spaces.
var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// loadUpstreams reads the file, checks it and builds every upstream's
// credentials (reading their files, relative to the file's directory).
// authOn is whether the server authenticates its callers: scopes and
// token exchange need it. Its errors are *configError.
func loadUpstreams(file string, authOn bool) (*upstreamsConfig, error) {
	data, err := readOperatorFile(file, maxUpstreamsFile)
	if err != nil {
		return nil, &configError{file: file, msg: err.Error()}
	}
	cfg, err := parseUpstreams(file, data, authOn)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(file)
	for _, e := range cfg.upstreams {
		if err := e.buildCredentials(file, dir); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// parseUpstreams checks the file's text; it reads no other file.
func parseUpstreams(file string, data []byte, authOn bool) (cfg *upstreamsConfig, err error) {
	d := &decoder{file: file, anchors: map[string]ast.Node{}}
	defer func() {
		// The parser is third-party code fed an operator's file: a panic
		// in it is a bad file, not a crash.
		if r := recover(); r != nil {
			cfg, err = nil, &configError{file: file, msg: fmt.Sprintf("cannot be read as YAML (%v)", r)}
		}
	}()
	tree, err := parser.ParseBytes(data, 0)
	if err != nil {
		// The parser's word for a tab in an indentation is a tab, quoted,
		// which reads as a space.
		for i, l := range strings.Split(string(data), "\n") {
			if indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(indent, "\t") {
				return nil, &configError{file: file, line: i + 1, msg: "not valid YAML: a tab in the indentation; YAML indents with spaces"}
			}
		}
		return nil, d.syntaxError(err)
	}
	var docs []*ast.DocumentNode
	for _, doc := range tree.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	switch len(docs) {
	case 0:
		return nil, &configError{file: file, path: "upstreams", msg: "missing (the file is empty; write upstreams: [] for none)"}
	case 1:
	default:
		return nil, d.at(docs[1].Body, "", "holds a second YAML document; write one")
	}
	if err := d.collectAnchors(docs[0].Body); err != nil {
		return nil, err
	}
	cfg = &upstreamsConfig{file: file}
	var seq ast.Node
	err = d.mapping(docs[0].Body, "", func(key string, v ast.Node, p string) error {
		if key != "upstreams" {
			return d.unknownKey(v, p, key, []string{"upstreams"})
		}
		seq = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if seq == nil {
		return nil, d.at(docs[0].Body, "upstreams", "missing (write upstreams: [] for none)")
	}
	items, err := d.sequence(seq, "upstreams")
	if err != nil {
		return nil, err
	}
	if len(items) > maxUpstreams {
		return nil, d.at(seq, "upstreams", fmt.Sprintf("%d upstreams, more than %d", len(items), maxUpstreams))
	}
	names := map[string]int{}
	for i, item := range items {
		p := fmt.Sprintf("upstreams[%d]", i)
		e, err := d.entry(item, p, i, authOn)
		if err != nil {
			return nil, err
		}
		if first, dup := names[e.Name]; dup {
			return nil, e.errorAt(d.file, "name", fmt.Sprintf("%q is also the name of upstreams[%d]; each upstream needs a name of its own", e.Name, first))
		}
		names[e.Name] = i
		cfg.upstreams = append(cfg.upstreams, e)
	}
	return cfg, nil
}

// entryKeys are the keys of an upstreams item, in the order errors list
// them.
var entryKeys = []string{
	"name", "url", "prefix", "include", "exclude", "scopes", "toolScopes", "versions", "credentials",
	"callTimeout", "connectTimeout", "maxConns", "maxInFlight", "maxResponseBytes", "breaker", "retries", "idleTimeout", "refresh",
	"allowCleartextCredentials",
}

// entry decodes and checks one upstreams item.
func (d *decoder) entry(n ast.Node, p string, index int, authOn bool) (*upstreamEntry, error) {
	e := &upstreamEntry{index: index, lines: map[string]int{"": line(n)}}
	field := func(key string) string { return p + "." + key }
	err := d.mapping(n, p, func(key string, v ast.Node, kp string) error {
		e.lines[key] = line(v)
		var err error
		switch key {
		case "name":
			e.Name, err = d.str(v, kp)
		case "url":
			e.URL, err = d.str(v, kp)
		case "prefix":
			e.Prefix, err = d.str(v, kp)
		case "include":
			e.Include, err = d.patterns(v, kp)
		case "exclude":
			e.Exclude, err = d.patterns(v, kp)
		case "scopes":
			e.Scopes, err = d.scopes(v, kp)
		case "toolScopes":
			err = d.mapping(v, kp, func(tool string, sv ast.Node, tp string) error {
				scopes, err := d.scopes(sv, tp)
				if err == nil && len(scopes) == 0 {
					err = d.at(sv, tp, "no scope; leave the tool out instead")
				}
				if e.ToolScopes == nil {
					e.ToolScopes = map[string][]string{}
				}
				e.ToolScopes[tool] = scopes
				return err
			})
		case "versions":
			e.Versions, err = d.versions(v, kp)
		case "credentials":
			e.Credentials, err = d.credentials(v, kp, e.lines)
		case "callTimeout":
			e.CallTimeout, err = d.positiveDuration(v, kp)
		case "connectTimeout":
			e.ConnectTimeout, err = d.positiveDuration(v, kp)
		case "maxConns":
			e.MaxConns, err = d.positiveInt(v, kp)
		case "maxInFlight":
			e.MaxInFlight, err = d.positiveInt(v, kp)
		case "maxResponseBytes":
			var n int
			n, err = d.positiveInt(v, kp)
			e.MaxResponseBytes = int64(n)
		case "breaker":
			err = d.breaker(v, kp, e)
		case "allowCleartextCredentials":
			e.AllowCleartextCredentials, err = d.boolean(v, kp)
		case "retries":
			err = d.mapping(v, kp, func(key string, rv ast.Node, rp string) error {
				if key != "idempotent" {
					return d.unknownKey(rv, rp, key, []string{"idempotent"})
				}
				var err error
				e.RetryIdempotent, err = d.boolean(rv, rp)
				return err
			})
		case "idleTimeout":
			e.IdleTimeout, err = d.positiveDuration(v, kp)
		case "refresh":
			e.Refresh, err = d.duration(v, kp)
			if err == nil && (e.Refresh < 0 || (e.Refresh > 0 && e.Refresh < minRefresh)) {
				err = d.at(v, kp, fmt.Sprintf("%v is below %v (0: the upstream's ttlMs)", e.Refresh, minRefresh))
			}
		default:
			err = d.unknownKey(v, kp, key, entryKeys)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	switch {
	case e.Name == "":
		return nil, d.at(n, field("name"), "missing")
	case !validName(e.Name, 64):
		return nil, e.errorAt(d.file, "name", fmt.Sprintf("%q must be 1 to 64 letters, digits, '_', '.' or '-'", e.Name))
	case e.URL == "":
		return nil, d.at(n, field("url"), "missing")
	}
	u, err := url.Parse(e.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, e.errorAt(d.file, "url", fmt.Sprintf("%q is not an http or https URL", e.URL))
	case u.User != nil:
		// Not the URL itself: it holds a secret.
		return nil, e.errorAt(d.file, "url", "holds a user name or password; give the upstream's credentials under credentials")
	case u.Fragment != "" || strings.Contains(e.URL, "#"):
		return nil, e.errorAt(d.file, "url", fmt.Sprintf("%q has a fragment", e.URL))
	}
	if e.Prefix != "" && !validName(e.Prefix, 64) {
		return nil, e.errorAt(d.file, "prefix", fmt.Sprintf("%q may hold only letters, digits, '_', '.' and '-' (the characters of a tool name)", e.Prefix))
	}
	if !authOn {
		const off = "needs -auth-issuer: with auth off no caller holds a scope"
		if e.Scopes != nil {
			return nil, e.errorAt(d.file, "scopes", off)
		}
		if e.ToolScopes != nil {
			return nil, e.errorAt(d.file, "toolScopes", off)
		}
		if e.Credentials.Kind == "tokenExchange" {
			return nil, e.errorAt(d.file, "credentials.tokenExchange", "needs -auth-issuer: it exchanges the caller's token, and with auth off a call has none")
		}
	}
	if err := e.checkCleartext(d.file); err != nil {
		return nil, err
	}
	return e, nil
}

// checkCleartext refuses credentials that would go over plain http to a
// host that is not loopback, unless allowCleartextCredentials says so:
// what upstream.Connect refuses too, found here with the key that says it
// (docs/operations.md). The URLs are read, never resolved nor dialled.
func (e *upstreamEntry) checkCleartext(file string) error {
	c := e.Credentials
	if c.Kind == "" || e.AllowCleartextCredentials {
		return nil
	}
	const fix = "; use https, or set allowCleartextCredentials: true"
	if cleartext.Remote(e.URL) {
		return e.errorAt(file, "url", fmt.Sprintf("%q is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted", e.URL)+fix)
	}
	if c.Kind != "headersFile" && cleartext.Remote(c.OAuth.TokenURL) {
		return e.errorAt(file, "credentials."+c.Kind+".tokenURL", fmt.Sprintf("%q is plain http to a host that is not loopback: the client secret would travel unencrypted", c.OAuth.TokenURL)+fix)
	}
	return nil
}

// errorAt is an error at key (a path below the entry) of e.
func (e *upstreamEntry) errorAt(file, key, msg string) *configError {
	l, ok := e.lines[key]
	if !ok {
		l = e.lines[""]
	}
	p := fmt.Sprintf("upstreams[%d]", e.index)
	if key != "" {
		p += "." + key
	}
	return &configError{file: file, line: l, path: p, msg: msg}
}

// credentialKinds are the keys of credentials: at most one.
var credentialKinds = []string{"headersFile", "clientCredentials", "tokenExchange"}

func (d *decoder) credentials(n ast.Node, p string, lines map[string]int) (credentialsEntry, error) {
	var c credentialsEntry
	err := d.mapping(n, p, func(key string, v ast.Node, kp string) error {
		if !slices.Contains(credentialKinds, key) {
			return d.unknownKey(v, kp, key, credentialKinds)
		}
		if c.Kind != "" {
			return d.at(v, kp, fmt.Sprintf("credentials already has %s; give one kind", c.Kind))
		}
		c.Kind = key
		lines["credentials."+key] = line(v)
		var err error
		if key == "headersFile" {
			c.HeadersFile, err = d.str(v, kp)
			if err == nil && c.HeadersFile == "" {
				err = d.at(v, kp, "empty; name the file of Name: value lines")
			}
			return err
		}
		c.OAuth, err = d.oauth(v, kp, key == "tokenExchange", "credentials."+key, lines)
		return err
	})
	if err == nil && c.Kind == "" {
		err = d.at(n, p, "empty; give one of "+strings.Join(credentialKinds, ", ")+", or leave credentials out")
	}
	return c, err
}

func (d *decoder) oauth(n ast.Node, p string, exchange bool, rel string, lines map[string]int) (oauthEntry, error) {
	keys := []string{"tokenURL", "clientID", "clientSecretFile", "scopes", "resource"}
	if exchange {
		keys = append(keys, "audience")
	}
	var o oauthEntry
	err := d.mapping(n, p, func(key string, v ast.Node, kp string) error {
		lines[rel+"."+key] = line(v)
		var err error
		switch {
		case key == "tokenURL":
			o.TokenURL, err = d.str(v, kp)
			if err != nil {
				return err
			}
			u, perr := url.Parse(o.TokenURL)
			switch {
			case perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				err = d.at(v, kp, fmt.Sprintf("%q is not an http or https URL", o.TokenURL))
			case u.User != nil:
				err = d.at(v, kp, "holds a user name or password; use clientID and clientSecretFile")
			case u.Fragment != "" || strings.Contains(o.TokenURL, "#"):
				err = d.at(v, kp, fmt.Sprintf("%q has a fragment", o.TokenURL))
			}
		case key == "clientID":
			o.ClientID, err = d.str(v, kp)
		case key == "clientSecretFile":
			o.ClientSecretFile, err = d.str(v, kp)
		case key == "scopes":
			o.Scopes, err = d.scopes(v, kp)
		case key == "resource":
			o.Resource, err = d.str(v, kp)
			if err != nil {
				return err
			}
			if r, perr := url.Parse(o.Resource); perr != nil || !r.IsAbs() || strings.Contains(o.Resource, "#") {
				err = d.at(v, kp, fmt.Sprintf("%q is not an absolute URI without a fragment (RFC 8707)", o.Resource))
			}
		case key == "audience" && exchange:
			o.Audience, err = d.str(v, kp)
		case key == "audience":
			err = d.at(v, kp, "is a token-exchange parameter; a client-credentials token names its upstream with resource")
		case key == "clientSecret":
			err = d.at(v, kp, "secrets are never written in this file: put the secret in a file and name it with clientSecretFile")
		default:
			err = d.unknownKey(v, kp, key, keys)
		}
		return err
	})
	if err != nil {
		return o, err
	}
	for _, req := range []struct{ key, v string }{{"tokenURL", o.TokenURL}, {"clientID", o.ClientID}, {"clientSecretFile", o.ClientSecretFile}} {
		if req.v == "" {
			return o, d.at(n, p+"."+req.key, "missing")
		}
	}
	return o, nil
}

func (d *decoder) breaker(n ast.Node, p string, e *upstreamEntry) error {
	return d.mapping(n, p, func(key string, v ast.Node, kp string) error {
		var err error
		switch key {
		case "minCalls":
			e.BreakerMinCalls, err = d.positiveInt(v, kp)
		case "probeInterval":
			e.BreakerProbeInterval, err = d.positiveDuration(v, kp)
		case "disabled":
			e.BreakerDisabled, err = d.boolean(v, kp)
		default:
			return d.unknownKey(v, kp, key, []string{"minCalls", "probeInterval", "disabled"})
		}
		if err == nil && e.BreakerDisabled && (e.BreakerMinCalls != 0 || e.BreakerProbeInterval != 0) {
			err = d.at(v, kp, "the breaker is disabled; give minCalls and probeInterval, or disabled: true, not both")
		}
		return err
	})
}

func (d *decoder) patterns(n ast.Node, p string) ([]string, error) {
	list, err := d.strings(n, p)
	for i, pat := range list {
		if _, perr := path.Match(pat, ""); perr != nil || pat == "" {
			return nil, d.at(d.item(n, i), fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("%q is not a path.Match pattern", pat))
		}
	}
	return list, err
}

func (d *decoder) scopes(n ast.Node, p string) ([]string, error) {
	list, err := d.strings(n, p)
	for i, s := range list {
		if !validScope(s) {
			return nil, d.at(d.item(n, i), fmt.Sprintf("%s[%d]", p, i), fmt.Sprintf("%q is not an OAuth scope: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", s))
		}
	}
	return list, err
}

func (d *decoder) versions(n ast.Node, p string) ([]string, error) {
	list, err := d.strings(n, p)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, d.at(n, p, "empty; leave versions out for every revision the gateway speaks")
	}
	for i, v := range list {
		ip := fmt.Sprintf("%s[%d]", p, i)
		switch {
		case !slices.Contains(gatewayRevisions, v):
			return nil, d.at(d.item(n, i), ip, fmt.Sprintf("%q is not one of %s", v, strings.Join(gatewayRevisions, ", ")))
		case slices.Index(list, v) < i:
			return nil, d.at(d.item(n, i), ip, fmt.Sprintf("%s is listed twice", v))
		}
	}
	return list, nil
}

// buildCredentials reads the entry's credential files (relative to dir)
// and makes its upstream.Credentials.
func (e *upstreamEntry) buildCredentials(file, dir string) error {
	c := e.Credentials
	if c.Kind == "" {
		return nil
	}
	resolve := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	base := "credentials." + c.Kind
	// A library error names Go fields and starts with its package; the
	// key path says the first, the second is noise here.
	trim := func(err error) string {
		msg := err.Error()
		for _, p := range []string{"upstream: static headers", "upstream: client credentials: ", "upstream: token exchange: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		return strings.TrimSpace(strings.TrimPrefix(msg, ": "))
	}
	h := sha256.New()
	var err error
	switch c.Kind {
	case "headersFile":
		p := resolve(c.HeadersFile)
		data, rerr := readOperatorFile(p, maxSecretFile)
		if rerr != nil {
			return e.errorAt(file, base, rerr.Error())
		}
		h.Write(data)
		if e.creds, err = upstream.StaticHeaders(p); err != nil {
			return e.errorAt(file, base, trim(err))
		}
	default:
		sp := resolve(c.OAuth.ClientSecretFile)
		secretKey := base + ".clientSecretFile"
		data, rerr := readOperatorFile(sp, maxSecretFile)
		if rerr != nil {
			return e.errorAt(file, secretKey, rerr.Error())
		}
		secret := string(bytes.TrimSpace(data))
		if secret == "" {
			return e.errorAt(file, secretKey, sp+" is empty")
		}
		h.Write(data)
		o := upstream.OAuth{
			TokenURL: c.OAuth.TokenURL, ClientID: c.OAuth.ClientID, ClientSecret: secret,
			Scopes: c.OAuth.Scopes, Resource: c.OAuth.Resource, Audience: c.OAuth.Audience,
		}
		if c.Kind == "clientCredentials" {
			e.creds, err = upstream.ClientCredentials(o)
		} else {
			e.creds, err = upstream.TokenExchange(o)
		}
		if err != nil {
			return e.errorAt(file, base, trim(err))
		}
	}
	e.digest = hex.EncodeToString(h.Sum(nil))
	return nil
}

// fingerprint is what a reload compares: the entry as the file says it,
// and its credential files' contents.
func (e *upstreamEntry) fingerprint() string {
	b, _ := json.Marshal(e) // the exported fields; maps sorted
	return string(b) + e.digest
}

// options are the upstream.Options of the entry.
func (e *upstreamEntry) options() upstream.Options {
	minCalls := e.BreakerMinCalls
	if e.BreakerDisabled {
		minCalls = -1
	}
	return upstream.Options{
		Name: e.Name, URL: e.URL, Prefix: e.Prefix,
		Include: e.Include, Exclude: e.Exclude,
		Scopes: e.Scopes, ToolScopes: e.ToolScopes,
		Credentials:               e.creds,
		AllowCleartextCredentials: e.AllowCleartextCredentials,
		Versions:                  e.Versions,
		CallTimeout:               e.CallTimeout,
		ConnectTimeout:            e.ConnectTimeout,
		MaxConns:                  e.MaxConns,
		MaxInFlight:               e.MaxInFlight,
		MaxResponseBytes:          e.MaxResponseBytes,
		BreakerMinCalls:           minCalls,
		BreakerProbeInterval:      e.BreakerProbeInterval,
		RetryIdempotent:           e.RetryIdempotent,
		IdleTimeout:               e.IdleTimeout,
		Refresh:                   e.Refresh,
	}
}

// validName reports whether s is 1 to max characters of a tool name:
// A-Z a-z 0-9 _ . -
func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// decoder reads the parse tree, with the errors of configError.
type decoder struct {
	file    string
	anchors map[string]ast.Node
}

// at is an error at node n, whose key path is p.
func (d *decoder) at(n ast.Node, p, msg string) *configError {
	return &configError{file: d.file, line: line(n), path: p, msg: msg}
}

// line is n's line, 0 when unknown.
func line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// syntaxError is the parser's error, on one line.
func (d *decoder) syntaxError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &configError{file: d.file, msg: "not valid YAML: " + ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.line = tk.Position.Line
		}
		return e
	}
	return &configError{file: d.file, msg: "not valid YAML: " + err.Error()}
}

// collectAnchors records the document's anchors, for its aliases.
func (d *decoder) collectAnchors(root ast.Node) error {
	var err error
	ast.Walk(visitor(func(n ast.Node) bool {
		a, ok := n.(*ast.AnchorNode)
		if !ok || err != nil {
			return err == nil
		}
		name := a.Name.GetToken().Value
		if _, dup := d.anchors[name]; dup {
			err = d.at(a, "", fmt.Sprintf("the anchor &%s is defined twice", name))
			return false
		}
		d.anchors[name] = a.Value
		return true
	}), root)
	return err
}

type visitor func(ast.Node) bool

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if n == nil || !v(n) {
		return nil
	}
	return v
}

// maxAliasDepth bounds aliases of aliases.
const maxAliasDepth = 32

// resolve returns the node n stands for: an anchor's or a standard tag's
// value, an alias's anchor.
func (d *decoder) resolve(n ast.Node, p string) (ast.Node, error) {
	for range maxAliasDepth {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			if tag := v.Start.Value; !strings.HasPrefix(tag, "!!") {
				return nil, d.at(n, p, fmt.Sprintf("the tag %s is not supported", tag))
			}
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			target, ok := d.anchors[name]
			if !ok {
				return nil, d.at(n, p, fmt.Sprintf("the alias *%s names no anchor", name))
			}
			n = target
		default:
			return n, nil
		}
	}
	return nil, d.at(n, p, "aliases nested too deep")
}

// kind names a node's type for errors.
func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "null"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	default:
		return "a string"
	}
}

// mapping calls each for every key of the mapping n, in order, with its
// value (resolved) and key path. Merge keys (<<) are expanded, the
// mapping's own keys winning. A null value is skipped: the key is as if
// absent.
func (d *decoder) mapping(n ast.Node, p string, each func(key string, v ast.Node, kp string) error) error {
	type entry struct {
		key string
		v   ast.Node
	}
	var own, merged []entry
	var collect func(n ast.Node, p string, depth int, into *[]entry) error
	collect = func(n ast.Node, p string, depth int, into *[]entry) error {
		n, err := d.resolve(n, p)
		if err != nil {
			return err
		}
		var values []*ast.MappingValueNode
		switch m := n.(type) {
		case *ast.MappingNode:
			values = m.Values
		case *ast.MappingValueNode:
			values = []*ast.MappingValueNode{m}
		default:
			what := "want a mapping of keys to values"
			if p == "" {
				what = "the file must be a mapping with the key upstreams"
			}
			return d.at(n, p, fmt.Sprintf("%s, got %s", what, kind(n)))
		}
		for _, mv := range values {
			if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
				if depth > maxAliasDepth {
					return d.at(mv, p, "merge keys nested too deep")
				}
				src, err := d.resolve(mv.Value, p)
				if err != nil {
					return err
				}
				if seq, ok := src.(*ast.SequenceNode); ok {
					for _, s := range seq.Values {
						if err := collect(s, p, depth+1, &merged); err != nil {
							return err
						}
					}
				} else if err := collect(src, p, depth+1, &merged); err != nil {
					return err
				}
				continue
			}
			k, err := d.resolve(mv.Key, p)
			if err != nil {
				return err
			}
			var key string
			switch kn := k.(type) {
			case *ast.StringNode:
				key = kn.Value
			case ast.ScalarNode:
				key = kn.GetToken().Value
			default:
				return d.at(mv, p, fmt.Sprintf("a key is %s; keys are strings", kind(k)))
			}
			*into = append(*into, entry{key, mv.Value})
		}
		return nil
	}
	if err := collect(n, p, 0, &own); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, e := range own {
		seen[e.key] = true
	}
	all := own
	for _, e := range merged {
		if !seen[e.key] {
			seen[e.key] = true
			all = append(all, e)
		}
	}
	for _, e := range all {
		kp := childPath(p, e.key)
		v, err := d.resolve(e.v, kp)
		if err != nil {
			return err
		}
		if _, null := v.(*ast.NullNode); null {
			continue
		}
		if err := each(e.key, v, kp); err != nil {
			return err
		}
	}
	return nil
}

// childPath is the path of key below p: p.key, or p["a key"] for a key
// that is not a plain word.
func childPath(p, key string) string {
	plain := key != ""
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			plain = false
		}
	}
	switch {
	case !plain:
		return fmt.Sprintf("%s[%q]", p, key)
	case p == "":
		return key
	}
	return p + "." + key
}

// unknownKey is the error of a key that is not one of known.
func (d *decoder) unknownKey(v ast.Node, kp, key string, known []string) error {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return d.at(v, kp, fmt.Sprintf("unknown key; did you mean %s?", k))
		}
	}
	return d.at(v, kp, "unknown key; the keys here are "+strings.Join(known, ", "))
}

// sequence returns the items of the list n.
func (d *decoder) sequence(n ast.Node, p string) ([]ast.Node, error) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return nil, d.at(n, p, "want a list, got "+kind(n))
	}
	return seq.Values, nil
}

// item is the i-th item of the list n (for an error's line).
func (d *decoder) item(n ast.Node, i int) ast.Node {
	if n, err := d.resolve(n, ""); err == nil {
		if seq, ok := n.(*ast.SequenceNode); ok && i < len(seq.Values) {
			return seq.Values[i]
		}
	}
	return n
}

// str reads a scalar as a string: its text as written, for a number or a
// boolean (a version such as 12 stays "12").
func (d *decoder) str(n ast.Node, p string) (string, error) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return v.Value.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, nil
	}
	return "", d.at(n, p, "want a string, got "+kind(n))
}

// strings reads a list of strings.
func (d *decoder) strings(n ast.Node, p string) ([]string, error) {
	items, err := d.sequence(n, p)
	if err != nil {
		return nil, d.at(n, p, "want a list of strings, got "+kind(n))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		ip := fmt.Sprintf("%s[%d]", p, i)
		v, err := d.resolve(it, ip)
		if err != nil {
			return nil, err
		}
		s, err := d.str(v, ip)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// positiveInt reads an integer of at least 1.
func (d *decoder) positiveInt(n ast.Node, p string) (int, error) {
	v, ok := n.(*ast.IntegerNode)
	if !ok {
		return 0, d.at(n, p, fmt.Sprintf("want an integer, got %s", describe(n)))
	}
	var i int64
	switch x := v.Value.(type) {
	case int64:
		i = x
	case uint64:
		if x > 1<<53 {
			return 0, d.at(n, p, fmt.Sprintf("%s is too large", v.Token.Value))
		}
		i = int64(x)
	}
	if i < 1 {
		return 0, d.at(n, p, fmt.Sprintf("%d must be at least 1", i))
	}
	if i > 1<<53 {
		return 0, d.at(n, p, fmt.Sprintf("%d is too large", i))
	}
	return int(i), nil
}

// boolean reads true or false.
func (d *decoder) boolean(n ast.Node, p string) (bool, error) {
	v, ok := n.(*ast.BoolNode)
	if !ok {
		return false, d.at(n, p, fmt.Sprintf("want true or false, got %s", describe(n)))
	}
	return v.Value, nil
}

// duration reads a Go duration ("30s", "1m30s"), or 0.
func (d *decoder) duration(n ast.Node, p string) (time.Duration, error) {
	if v, ok := n.(*ast.IntegerNode); ok && v.Token.Value == "0" {
		return 0, nil
	}
	s, err := d.str(n, p)
	if err != nil {
		return 0, d.at(n, p, fmt.Sprintf("want a duration such as 30s, got %s", kind(n)))
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, d.at(n, p, fmt.Sprintf("%q is not a duration: write a number and a unit, such as 30s or 1m30s", s))
	}
	return v, nil
}

// positiveDuration reads a duration above 0.
func (d *decoder) positiveDuration(n ast.Node, p string) (time.Duration, error) {
	v, err := d.duration(n, p)
	if err == nil && v <= 0 {
		err = d.at(n, p, fmt.Sprintf("%v must be positive", v))
	}
	return v, err
}

// describe is a scalar's text, quoted, or its kind.
func describe(n ast.Node) string {
	if _, ok := n.(ast.ScalarNode); ok {
		if tk := n.GetToken(); tk != nil {
			return fmt.Sprintf("%s %q", kind(n), tk.Value)
		}
	}
	return kind(n)
}
