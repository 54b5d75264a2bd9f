package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// The -upstreams file: the upstream MCP servers whose tools the binary
// serves, and the views it serves them in (deploy/upstreams.example.yaml
// documents every key). It is decoded strictly (upstreams_decode.go);
// upstream.Options.Validate owns what an upstream's values mean, and this
// file what the file adds: its keys, their combinations, auth, the views.
// Every error is one line naming the line, the key path and what is
// wrong: at start a bad command line (exit status 2), on SIGHUP logged,
// nothing changed (gateway.go).

// maxUpstreamsFile bounds the file: a configuration, not a file given by
// mistake.
const maxUpstreamsFile = 1 << 20

// upstreamsConfig is the file, checked.
type upstreamsConfig struct {
	file      string // as given to -upstreams
	upstreams []*upstreamEntry
	servers   []*serverEntry
}

// fileDoc is what the file holds.
type fileDoc struct {
	Upstreams []*upstreamEntry `yaml:"upstreams"`
	Servers   []*serverEntry   `yaml:"servers"`
}

// serverEntry is a view: served at Path, with the tools Tools names
// (served names or path.Match patterns; none: every tool), its serverInfo
// Name ("": the binary's), and the Scopes every request to it needs.
type serverEntry struct {
	Path   string   `yaml:"path"`
	Name   string   `yaml:"name"`
	Tools  []string `yaml:"tools"`
	Scopes []string `yaml:"scopes"`
}

// upstreamEntry is an upstream as the file says it: its exported fields,
// which a reload compares; zero is upstream.Options' default.
type upstreamEntry struct {
	Name             string                    `yaml:"name"`
	URL              string                    `yaml:"url"`
	Prefix           string                    `yaml:"prefix"`
	Include          []string                  `yaml:"include"`
	Exclude          []string                  `yaml:"exclude"`
	Overrides        map[string]*overrideEntry `yaml:"overrides"`
	Scopes           []string                  `yaml:"scopes"`
	ToolScopes       map[string][]string       `yaml:"toolScopes"`
	Versions         []string                  `yaml:"versions"`
	Credentials      *credentialsEntry         `yaml:"credentials"`
	CallTimeout      duration                  `yaml:"callTimeout"`
	ConnectTimeout   duration                  `yaml:"connectTimeout"`
	MaxConns         count                     `yaml:"maxConns"`
	MaxInFlight      count                     `yaml:"maxInFlight"`
	MaxResponseBytes count                     `yaml:"maxResponseBytes"`
	Breaker          struct {
		MinCalls      count    `yaml:"minCalls"`
		ProbeInterval duration `yaml:"probeInterval"`
		Disabled      bool     `yaml:"disabled"`
	} `yaml:"breaker"`
	Retries struct {
		Idempotent bool `yaml:"idempotent"`
	} `yaml:"retries"`
	IdleTimeout               duration `yaml:"idleTimeout"`
	Refresh                   duration `yaml:"refresh"`
	AllowCleartextCredentials bool     `yaml:"allowCleartextCredentials"`

	index  int            // in the file
	lines  map[string]int // the file's, by key path
	creds  upstream.Credentials
	digest string // of the credentials' file: a rotated secret reconnects
}

// overrideEntry is how one upstream tool is served (upstream.Override).
type overrideEntry struct {
	Name        string                    `yaml:"name"`
	Title       string                    `yaml:"title"`
	Description string                    `yaml:"description"`
	Annotations *protocol.ToolAnnotations `yaml:"annotations"`
}

// credentialsEntry is an upstream's credentials: one kind.
type credentialsEntry struct {
	HeadersFile       string      `yaml:"headersFile"`
	ClientCredentials *oauthEntry `yaml:"clientCredentials"`
	TokenExchange     *oauthEntry `yaml:"tokenExchange"`
}

type oauthEntry struct {
	TokenURL         string   `yaml:"tokenURL"`
	ClientID         string   `yaml:"clientID"`
	ClientSecretFile string   `yaml:"clientSecretFile"`
	Scopes           []string `yaml:"scopes"`
	Resource         string   `yaml:"resource"`
	Audience         string   `yaml:"audience"`
	ClientSecret     refused  `yaml:"clientSecret" json:"-"`
}

// kind is the key of the credentials, and oauth their OAuth ones.
func (c *credentialsEntry) kind() (kind string, oauth *oauthEntry) {
	switch {
	case c == nil:
	case c.HeadersFile != "":
		return "headersFile", nil
	case c.ClientCredentials != nil:
		return "clientCredentials", c.ClientCredentials
	case c.TokenExchange != nil:
		return "tokenExchange", c.TokenExchange
	}
	return "", nil
}

// loadUpstreams reads the file, checks it and builds every upstream's
// credentials (from their files, relative to the file's directory).
// authOn is whether callers are authenticated: scopes and token exchange
// need it. Its errors are *configError.
func loadUpstreams(file string, authOn bool) (*upstreamsConfig, error) {
	data, err := readOperatorFile(file, maxUpstreamsFile)
	if err != nil {
		return nil, &configError{file: file, msg: err.Error()}
	}
	cfg, err := parseUpstreams(file, data, authOn)
	for i := 0; err == nil && i < len(cfg.upstreams); i++ {
		e := cfg.upstreams[i]
		// Validated again with the credentials: where they may go.
		err = cmp.Or(e.buildCredentials(file, filepath.Dir(file)), e.validate(file))
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseUpstreams checks the file's text; it reads no other file.
func parseUpstreams(file string, data []byte, authOn bool) (*upstreamsConfig, error) {
	var f fileDoc
	lines, err := decodeFile(file, data, &f)
	if err != nil {
		return nil, err
	}
	at := func(p, msg string, args ...any) error {
		return &configError{file: file, line: lineOf(lines, p), path: p, msg: fmt.Sprintf(msg, args...)}
	}
	if _, ok := lines["upstreams"]; !ok {
		return nil, at("upstreams", "missing (write upstreams: [] for none)")
	}
	names, paths := map[string]int{}, map[string]int{}
	for i, e := range f.Upstreams {
		if e == nil {
			return nil, at(fmt.Sprintf("upstreams[%d]", i), "want a mapping of keys to values, got null")
		}
		e.index, e.lines = i, lines
		if err := e.check(file, authOn); err != nil {
			return nil, err
		} else if first, dup := names[e.Name]; dup {
			return nil, e.errorAt(file, "name", fmt.Sprintf("%q is also the name of upstreams[%d]; each upstream needs a name of its own", e.Name, first))
		}
		names[e.Name] = i
	}
	for i, s := range f.Servers {
		p := fmt.Sprintf("servers[%d]", i)
		if s == nil {
			return nil, at(p, "want a mapping of keys to values, got null")
		} else if key, msg := s.check(authOn, paths, i); msg != "" {
			return nil, at(p+"."+key, "%s", msg)
		}
	}
	return &upstreamsConfig{file: file, upstreams: f.Upstreams, servers: f.Servers}, nil
}

// check checks what the file adds to upstream.Options.Validate (one kind
// of credentials with its file named, the breaker's keys, auth for what
// needs a caller), then that.
func (e *upstreamEntry) check(file string, authOn bool) error {
	c := e.Credentials
	kind, oauth := c.kind()
	const off = "needs -auth-issuer: with auth off no caller holds a scope"
	const disabled = "the breaker is disabled; give minCalls and probeInterval, or disabled: true, not both"
	switch {
	case c != nil && kind == "":
		return e.errorAt(file, "credentials", "empty; give one of headersFile, clientCredentials, tokenExchange, or leave credentials out")
	case c != nil && c.TokenExchange != nil && oauth != c.TokenExchange:
		return e.errorAt(file, "credentials.tokenExchange", "credentials already has "+kind+"; give one kind")
	case c != nil && c.ClientCredentials != nil && oauth != c.ClientCredentials:
		return e.errorAt(file, "credentials.clientCredentials", "credentials already has "+kind+"; give one kind")
	case oauth != nil && oauth.ClientSecretFile == "":
		return e.errorAt(file, "credentials."+kind+".clientSecretFile", "missing")
	case e.Refresh > 0 && e.Refresh < duration(time.Second):
		// A typo (1ms) must not turn into a tools/list storm.
		return e.errorAt(file, "refresh", fmt.Sprintf("%v is below 1s (0: the upstream's ttlMs)", time.Duration(e.Refresh)))
	case e.Breaker.Disabled && e.Breaker.MinCalls != 0:
		return e.errorAt(file, "breaker.minCalls", disabled)
	case e.Breaker.Disabled && e.Breaker.ProbeInterval != 0:
		return e.errorAt(file, "breaker.probeInterval", disabled)
	case !authOn && e.Scopes != nil:
		return e.errorAt(file, "scopes", off)
	case !authOn && e.ToolScopes != nil:
		return e.errorAt(file, "toolScopes", off)
	case !authOn && kind == "tokenExchange":
		return e.errorAt(file, "credentials.tokenExchange", "needs -auth-issuer: it exchanges the caller's token, and with auth off a call has none")
	}
	return e.validate(file)
}

// check checks a view; paths are the views' paths before it.
func (s *serverEntry) check(authOn bool, paths map[string]int, i int) (key, msg string) {
	first, dup := paths[s.Path]
	paths[s.Path] = i
	switch {
	case s.Path == "":
		return "path", "missing"
	case path.Clean(s.Path) != s.Path || s.Path[0] != '/' || strings.Trim(s.Path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/") != "":
		// What http.ServeMux takes as a plain path: no method, host or
		// {wildcard}, nothing it would redirect.
		return "path", fmt.Sprintf("%q is not a clean absolute path of letters, digits, '-', '.', '_', '~' and '/'", s.Path)
	case s.Path == "/healthz" || s.Path == "/readyz":
		return "path", s.Path + " is the binary's own endpoint"
	case dup:
		return "path", fmt.Sprintf("%s is also the path of servers[%d]", s.Path, first)
	case !authOn && s.Scopes != nil:
		return "scopes", "needs -auth-issuer: with auth off no caller holds a scope"
	}
	for j, t := range s.Tools {
		if _, err := path.Match(t, ""); err != nil || t == "" {
			return fmt.Sprintf("tools[%d]", j), fmt.Sprintf("%q is not a served name nor a path.Match pattern", t)
		}
	}
	for j, sc := range s.Scopes {
		if !validScope(sc) {
			return fmt.Sprintf("scopes[%d]", j), fmt.Sprintf("%q is not an OAuth scope: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", sc)
		}
	}
	return "", ""
}

// fieldPart is a part of an upstream.OptionError's Field below the field:
// [1], ["a key"] or .Field.
var fieldPart = regexp.MustCompile(`\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.(\w+)`)

// validate is what upstream.Options.Validate says of e's options, at the
// key of the file that set the field it names.
func (e *upstreamEntry) validate(file string) error {
	o := e.options()
	var oe *upstream.OptionError
	if err := o.Validate(); !errors.As(err, &oe) {
		return err
	}
	i := strings.IndexAny(oe.Field+".", ".[")
	kind, _ := e.Credentials.kind()
	special := map[string]string{"URL": "url", "BreakerMinCalls": "breaker.minCalls", "BreakerProbeInterval": "breaker.probeInterval", "Credentials": "credentials." + kind}
	key := cmp.Or(special[oe.Field[:i]], lowerFirst(oe.Field[:i]))
	for _, m := range fieldPart.FindAllStringSubmatch(oe.Field[i:], -1) {
		if k, err := strconv.Unquote(m[2]); err == nil {
			key = keyChild(key, k)
		} else if m[1] != "" {
			key += "[" + m[1] + "]"
		} else {
			key = keyChild(key, lowerFirst(m[3]))
		}
	}
	return e.errorAt(file, key, oe.Problem)
}

// errorAt is an error at key (a path below the entry) of e.
func (e *upstreamEntry) errorAt(file, key, msg string) *configError {
	p := strings.TrimSuffix(fmt.Sprintf("upstreams[%d].%s", e.index, key), ".")
	return &configError{file: file, line: lineOf(e.lines, p), path: p, msg: msg}
}

// buildCredentials reads the entry's credentials file (relative to dir)
// and makes its upstream.Credentials.
func (e *upstreamEntry) buildCredentials(file, dir string) error {
	kind, oauth := e.Credentials.kind()
	if kind == "" {
		return nil
	}
	key, p := "credentials."+kind, e.Credentials.HeadersFile
	if oauth != nil {
		key, p = key+".clientSecretFile", oauth.ClientSecretFile
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err := readOperatorFile(p, maxSecretFile)
	if err == nil && oauth != nil && len(bytes.TrimSpace(data)) == 0 {
		err = errors.New(p + " is empty")
	}
	if err != nil {
		return e.errorAt(file, key, err.Error())
	}
	sum := sha256.Sum256(data)
	e.digest = hex.EncodeToString(sum[:])
	if oauth == nil {
		e.creds, err = upstream.StaticHeaders(p)
	} else {
		o := upstream.OAuth{TokenURL: oauth.TokenURL, ClientID: oauth.ClientID, ClientSecret: string(bytes.TrimSpace(data)),
			Scopes: oauth.Scopes, Resource: oauth.Resource, Audience: oauth.Audience}
		if kind == "clientCredentials" {
			e.creds, err = upstream.ClientCredentials(o)
		} else {
			e.creds, err = upstream.TokenExchange(o)
		}
	}
	if err == nil {
		return nil
	}
	// The library's error starts with its package and a Go field, which
	// the key path says better.
	msg := err.Error()
	for _, p := range []string{"upstream: static headers", "upstream: client credentials: ", "upstream: token exchange: "} {
		msg = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(msg, p), ": "))
	}
	if field, rest, _ := strings.Cut(msg, " "); oauth != nil && slices.Contains([]string{"TokenURL", "ClientID", "Resource", "Audience"}, field) {
		return e.errorAt(file, "credentials."+kind+"."+lowerFirst(field), rest)
	}
	return e.errorAt(file, "credentials."+kind, msg)
}

// fingerprint is what a reload compares: the entry as the file says it,
// and its credentials file's contents.
func (e *upstreamEntry) fingerprint() string {
	b, _ := json.Marshal(e) // the exported fields; maps sorted
	return string(b) + e.digest
}

// options are the upstream.Options of the entry.
func (e *upstreamEntry) options() upstream.Options {
	minCalls := int(e.Breaker.MinCalls)
	if e.Breaker.Disabled {
		minCalls = -1
	}
	o := upstream.Options{
		Name: e.Name, URL: e.URL, Prefix: e.Prefix, Include: e.Include, Exclude: e.Exclude,
		Scopes: e.Scopes, ToolScopes: e.ToolScopes, Versions: e.Versions,
		Credentials: e.creds, AllowCleartextCredentials: e.AllowCleartextCredentials,
		CallTimeout: time.Duration(e.CallTimeout), ConnectTimeout: time.Duration(e.ConnectTimeout),
		MaxConns: int(e.MaxConns), MaxInFlight: int(e.MaxInFlight), MaxResponseBytes: int64(e.MaxResponseBytes),
		BreakerMinCalls: minCalls, BreakerProbeInterval: time.Duration(e.Breaker.ProbeInterval),
		RetryIdempotent: e.Retries.Idempotent, IdleTimeout: time.Duration(e.IdleTimeout), Refresh: time.Duration(e.Refresh),
		Overrides: make(map[string]upstream.Override, len(e.Overrides)),
	}
	for tool, ov := range e.Overrides {
		o.Overrides[tool] = upstream.Override{Name: ov.Name, Title: ov.Title, Description: ov.Description, Annotations: ov.Annotations}
	}
	return o
}

func lowerFirst(s string) string { return strings.ToLower(s[:min(1, len(s))]) + s[min(1, len(s)):] }
