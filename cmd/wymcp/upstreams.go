package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/upstream"
)

// The -upstreams file: the upstream MCP servers whose tools the binary
// serves, and the views it serves them in (deploy/upstreams.example.yaml
// documents every key). It is decoded strictly (upstreams_decode.go).
// Packages upstream (Options.Validate, the credentials) and gateway
// (Options.Validate: views, names) own what the values mean; this file
// owns what the file adds: its keys, their combinations, auth, the
// binary's own paths. Every error is one line naming the line, the key
// path and what is wrong: at start a bad command line (exit status 2), on
// SIGHUP logged, nothing changed (gateway.go).

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

// serverEntry is a view (gateway.View): served at Path, with the tools
// Tools names (served names or path.Match patterns; none: every tool), its
// serverInfo Name ("": the binary's), and the Scopes every request to it
// needs.
type serverEntry struct {
	Path   string   `yaml:"path"`
	Name   string   `yaml:"name"`
	Tools  []string `yaml:"tools"`
	Scopes []string `yaml:"scopes"`
}

// upstreamEntry is an upstream as the file says it: its exported fields,
// which a reload compares; zero is upstream.Options' default. Its
// overrides are upstream.Override itself, whose fields go-yaml keys by
// their lowercased names (name, title, description, annotations).
type upstreamEntry struct {
	Name             string                       `yaml:"name"`
	URL              string                       `yaml:"url"`
	Prefix           string                       `yaml:"prefix"`
	Include          []string                     `yaml:"include"`
	Exclude          []string                     `yaml:"exclude"`
	Overrides        map[string]upstream.Override `yaml:"overrides"`
	Scopes           []string                     `yaml:"scopes"`
	ToolScopes       map[string][]string          `yaml:"toolScopes"`
	Versions         []string                     `yaml:"versions"`
	Credentials      *credentialsEntry            `yaml:"credentials"`
	CallTimeout      duration                     `yaml:"callTimeout"`
	ConnectTimeout   duration                     `yaml:"connectTimeout"`
	MaxConns         count                        `yaml:"maxConns"`
	MaxInFlight      count                        `yaml:"maxInFlight"`
	MaxResponseBytes count                        `yaml:"maxResponseBytes"`
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
	if err != nil {
		return nil, err
	}
	for _, e := range cfg.upstreams {
		// Validated again with the credentials: where they may go.
		if err := cmp.Or(e.buildCredentials(file, filepath.Dir(file)), e.validate(file)); err != nil {
			return nil, err
		}
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
	at := func(p, msg string) error {
		return &configError{file: file, line: lineOf(lines, p), path: p, msg: msg}
	}
	if _, ok := lines["upstreams"]; !ok {
		return nil, at("upstreams", "missing (write upstreams: [] for none)")
	}
	const null = "want a mapping, got null"
	cfg := &upstreamsConfig{file: file, upstreams: f.Upstreams, servers: f.Servers}
	for i, e := range f.Upstreams {
		if e == nil {
			return nil, at(fmt.Sprintf("upstreams[%d]", i), null)
		}
		e.index, e.lines = i, lines
		if err := e.check(file, authOn); err != nil {
			return nil, err
		}
	}
	for i, s := range f.Servers {
		p := fmt.Sprintf("servers[%d]", i)
		if s == nil {
			return nil, at(p, null)
		} else if key, msg := s.check(authOn); msg != "" {
			return nil, at(p+"."+key, msg)
		}
	}
	// The views' rules and the upstreams' names are package gateway's.
	opts := gateway.Options{Upstreams: upstreamOptions(cfg), Views: gatewayViews(cfg)}
	var oe *gateway.OptionError
	if err := opts.Validate(); errors.As(err, &oe) {
		return nil, at(keyOf(oe.Field, ""), oe.Problem)
	} else if err != nil {
		return nil, err
	}
	return cfg, nil
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

// check checks what the binary adds to a view: a path of its own, not
// one of its endpoints, and scopes, which only auth gives a caller.
func (s *serverEntry) check(authOn bool) (key, msg string) {
	switch {
	case s.Path == "":
		return "path", "missing"
	case s.Path == "/healthz" || s.Path == "/readyz":
		return "path", s.Path + " is the binary's own endpoint"
	case !authOn && s.Scopes != nil:
		return "scopes", "needs -auth-issuer: with auth off no caller holds a scope"
	}
	for j, sc := range s.Scopes {
		if !validScope(sc) {
			return fmt.Sprintf("scopes[%d]", j), fmt.Sprintf("%q is not an OAuth scope: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", sc)
		}
	}
	return "", ""
}

// validate is what upstream.Options.Validate says of e's options, at the
// key of the file that set the field it names.
func (e *upstreamEntry) validate(file string) error {
	o := e.options()
	return e.optionError(file, "", o.Validate())
}

// optionError is err, an *upstream.OptionError about e's field under
// prefix (a Go field path), at the key that set it.
func (e *upstreamEntry) optionError(file, prefix string, err error) error {
	var oe *upstream.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	kind, _ := e.Credentials.kind()
	key := keyOf(strings.TrimSuffix(prefix+oe.Field, "."), "credentials."+kind)
	return e.errorAt(file, key, oe.Problem)
}

// fieldPart is a part of a field path as packages upstream and gateway
// name it: [1], ["a key"] or .Field.
var fieldPart = regexp.MustCompile(`\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?(\w+)`)

// keyOf is the key path of the file that sets a field (Views[1].Tools[0]:
// servers[1].tools[0]; Overrides["a.b"].Name: overrides.'a.b'.name);
// creds is the key of an entry's Credentials.
func keyOf(field, creds string) (key string) {
	special := map[string]string{"URL": "url", "Views": "servers", "Credentials": creds,
		"BreakerMinCalls": "breaker.minCalls", "BreakerProbeInterval": "breaker.probeInterval"}
	for _, m := range fieldPart.FindAllStringSubmatch(field, -1) {
		if k, err := strconv.Unquote(m[2]); err == nil {
			key = keyChild(key, k)
		} else if m[1] != "" {
			key += "[" + m[1] + "]"
		} else if name := special[m[3]]; name != "" {
			key = strings.TrimPrefix(key+"."+name, ".")
		} else {
			key = keyChild(key, strings.ToLower(m[3][:1])+m[3][1:])
		}
	}
	return key
}

// errorAt is an error at key (a path below the entry) of e.
func (e *upstreamEntry) errorAt(file, key, msg string) *configError {
	p := strings.TrimSuffix(fmt.Sprintf("upstreams[%d].%s", e.index, key), ".")
	return &configError{file: file, line: lineOf(e.lines, p), path: p, msg: msg}
}

// buildCredentials makes the entry's upstream.Credentials from their
// file (relative to dir), and the digest of that file a reload compares.
func (e *upstreamEntry) buildCredentials(file, dir string) (err error) {
	kind, oauth := e.Credentials.kind()
	if kind == "" {
		return nil
	}
	p := e.Credentials.HeadersFile
	if oauth != nil {
		p = oauth.ClientSecretFile
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if oauth == nil {
		e.creds, err = upstream.StaticHeaders(p)
	} else {
		o := upstream.OAuth{TokenURL: oauth.TokenURL, ClientID: oauth.ClientID, ClientSecretFile: p,
			Scopes: oauth.Scopes, Resource: oauth.Resource, Audience: oauth.Audience}
		if kind == "clientCredentials" {
			e.creds, err = upstream.ClientCredentials(o)
		} else {
			e.creds, err = upstream.TokenExchange(o)
		}
	}
	if err != nil {
		return e.optionError(file, "Credentials.", err)
	}
	// Read again for the digest alone: a file changed or gone since is
	// a change the next reload sees.
	data, _ := readOperatorFile(p, maxSecretFile)
	sum := sha256.Sum256(data)
	e.digest = hex.EncodeToString(sum[:])
	return nil
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
	return upstream.Options{
		Name: e.Name, URL: e.URL, Prefix: e.Prefix, Include: e.Include, Exclude: e.Exclude, Overrides: e.Overrides,
		Scopes: e.Scopes, ToolScopes: e.ToolScopes, Versions: e.Versions,
		Credentials: e.creds, AllowCleartextCredentials: e.AllowCleartextCredentials,
		CallTimeout: time.Duration(e.CallTimeout), ConnectTimeout: time.Duration(e.ConnectTimeout),
		MaxConns: int(e.MaxConns), MaxInFlight: int(e.MaxInFlight), MaxResponseBytes: int64(e.MaxResponseBytes),
		BreakerMinCalls: minCalls, BreakerProbeInterval: time.Duration(e.Breaker.ProbeInterval),
		RetryIdempotent: e.Retries.Idempotent, IdleTimeout: time.Duration(e.IdleTimeout), Refresh: time.Duration(e.Refresh),
	}
}
