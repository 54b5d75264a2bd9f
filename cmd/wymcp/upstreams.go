package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp/gateway"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/upstream"
)

// The -upstreams file (deploy/upstreams.example.yaml documents every key):
// go-yaml parses it, the tree is checked for what a hostile file could do,
// and its strict decoder fills the types below. Packages upstream and
// gateway own what the values mean (their Options.Validate); this file
// owns what the file adds: its keys, their combinations, auth, the
// binary's own paths. Every error is one line naming the line, the key
// path and what is wrong: at start a bad command line (exit status 2), on
// SIGHUP logged, nothing changed (gateway.go).

// upstreamsConfig is the file, checked.
type upstreamsConfig struct {
	file      string // as given to -upstreams
	upstreams []*upstreamEntry
	servers   []*serverEntry
	lines     map[string]int // by key path
}

// serverEntry is a view (gateway.View), and the Scopes every request to
// it needs.
type serverEntry struct {
	Path   string   `yaml:"path"`
	Name   string   `yaml:"name"`
	Tools  []string `yaml:"tools"`
	Scopes []string `yaml:"scopes"`
	Guard  `yaml:",inline"`
}

// overrideEntry is upstream.Override as the file says it.
type overrideEntry struct {
	Name        string                    `yaml:"name"`
	Title       string                    `yaml:"title"`
	Description string                    `yaml:"description"`
	Annotations *protocol.ToolAnnotations `yaml:"annotations"`
	Guard       `yaml:",inline"`
}

// upstreamEntry is an upstream as the file says it, which a reload
// compares (fingerprint). Each field sets the upstream.Options field of
// its name (options); zero is its default.
type upstreamEntry struct {
	Name             string                    `yaml:"name"`
	URL              string                    `yaml:"url"`
	Command          string                    `yaml:"command"`
	Args             []string                  `yaml:"args"`
	Env              map[string]string         `yaml:"env"`
	InheritEnv       []string                  `yaml:"inheritEnv"`
	Dir              string                    `yaml:"dir"` // relative to the file's directory
	Sessions         string                    `yaml:"sessions"`
	MaxCallers       count                     `yaml:"maxCallers"`
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
	Guard                     `yaml:",inline"`

	creds  upstream.Credentials
	digest string // of the credentials' file: a rotated secret reconnects
}

// credentialsEntry is an upstream's credentials: one of its keys.
type credentialsEntry struct {
	HeadersFile       string      `yaml:"headersFile"`
	ClientCredentials *oauthEntry `yaml:"clientCredentials"`
	TokenExchange     *oauthEntry `yaml:"tokenExchange"`
}

// oauthEntry is upstream.OAuth, its secret in a file.
type oauthEntry struct {
	TokenURL         string   `yaml:"tokenURL"`
	ClientID         string   `yaml:"clientID"`
	ClientSecretFile string   `yaml:"clientSecretFile"`
	Scopes           []string `yaml:"scopes"`
	Resource         string   `yaml:"resource"`
	Audience         string   `yaml:"audience"`
	ClientSecret     refused  `yaml:"clientSecret" json:"-"`
}

// kind is the key c sets ("" for none), another a second one (a
// mistake), and oauth its OAuth credentials.
func (c *credentialsEntry) kind() (kind, another string, oauth *oauthEntry) {
	if c == nil {
		return "", "", nil
	}
	keys := []string{}
	for v, i := reflect.ValueOf(c).Elem(), 0; i < v.NumField(); i++ {
		if !v.Field(i).IsZero() {
			keys = append(keys, v.Type().Field(i).Tag.Get("yaml"))
		}
	}
	keys = append(keys, "", "")
	return keys[0], keys[1], cmp.Or(c.ClientCredentials, c.TokenExchange)
}

// loadUpstreams reads the file, checks it, builds every upstream's
// credentials (from their files, relative to the file's directory) and
// checks where those may go. authOn is whether callers are authenticated:
// scopes and token exchange need it. Its errors are *configError.
func loadUpstreams(file string, authOn bool) (*upstreamsConfig, error) {
	data, err := readOperatorFile(file, maxUpstreamsFile)
	if err != nil {
		return nil, &configError{file: file, msg: err.Error()}
	}
	cfg, err := parseUpstreams(file, data, authOn)
	if err != nil {
		return nil, err
	}
	for i, e := range cfg.upstreams {
		var oe *upstream.OptionError
		if err := e.buildCredentials(filepath.Dir(file)); errors.As(err, &oe) {
			return nil, cfg.at(cfg.keyOf(fmt.Sprintf("Upstreams[%d].Credentials.%s", i, oe.Field)), oe.Problem)
		} else if err != nil {
			return nil, err
		}
	}
	return cfg.validated()
}

// parseUpstreams checks the file's text; it reads no other file.
func parseUpstreams(file string, data []byte, authOn bool) (*upstreamsConfig, error) {
	var doc struct {
		Upstreams []*upstreamEntry `yaml:"upstreams"`
		Servers   []*serverEntry   `yaml:"servers"`
	}
	lines, ce := decodeFile(data, &doc)
	if ce != nil {
		ce.file = file
		return nil, ce
	}
	cfg := &upstreamsConfig{file: file, upstreams: doc.Upstreams, servers: doc.Servers, lines: lines}
	for _, e := range doc.Upstreams {
		if e != nil && e.Dir != "" && !filepath.IsAbs(e.Dir) {
			// As a credentials file is: relative to the file's directory.
			e.Dir, _ = filepath.Abs(filepath.Join(filepath.Dir(file), e.Dir))
		}
	}
	if _, ok := lines["upstreams"]; !ok {
		return nil, cfg.at("upstreams", "missing (write upstreams: [] for none)")
	}
	for i, e := range doc.Upstreams {
		if key, msg := e.check(authOn); msg != "" {
			return nil, cfg.at(strings.TrimSuffix(fmt.Sprintf("upstreams[%d].%s", i, key), "."), msg)
		}
	}
	for i, s := range doc.Servers {
		if key, msg := s.check(authOn); msg != "" {
			return nil, cfg.at(strings.TrimSuffix(fmt.Sprintf("servers[%d].%s", i, key), "."), msg)
		}
	}
	return validGuards(cfg)
}

const (
	null    = "want a mapping, got null"
	noScope = "needs -auth-issuer: with auth off no caller holds a scope"
)

// check is what the file adds to upstream.Options.Validate: one kind of
// credentials with its file named, the breaker's keys, auth for what needs
// a caller. It returns the key below the entry, and what is wrong.
func (e *upstreamEntry) check(authOn bool) (key, msg string) {
	if e == nil {
		return "", null
	}
	kind, another, oauth := e.Credentials.kind()
	const disabled = "the breaker is disabled; give minCalls and probeInterval, or disabled: true, not both"
	switch {
	case e.Credentials != nil && kind == "":
		return "credentials", "empty; give one of headersFile, clientCredentials, tokenExchange, or leave credentials out"
	case another != "":
		return "credentials." + another, "credentials already has " + kind + "; give one kind"
	case oauth != nil && oauth.ClientSecretFile == "":
		return "credentials." + kind + ".clientSecretFile", "missing"
	case e.Sessions != "" && e.Sessions != "shared" && e.Sessions != "perCaller":
		return "sessions", fmt.Sprintf("%q is neither shared nor perCaller", e.Sessions)
	case e.MaxCallers != 0 && e.Sessions != "perCaller":
		return "maxCallers", "applies only with sessions: perCaller"
	case e.Refresh > 0 && e.Refresh < duration(time.Second):
		// A typo (1ms) must not turn into a tools/list storm.
		return "refresh", fmt.Sprintf("%v is below 1s (0: the upstream's ttlMs)", time.Duration(e.Refresh))
	case e.Breaker.Disabled && e.Breaker.MinCalls != 0:
		return "breaker.minCalls", disabled
	case e.Breaker.Disabled && e.Breaker.ProbeInterval != 0:
		return "breaker.probeInterval", disabled
	case !authOn && e.Scopes != nil:
		return "scopes", noScope
	case !authOn && e.ToolScopes != nil:
		return "toolScopes", noScope
	case !authOn && kind == "tokenExchange":
		return "credentials.tokenExchange", "needs -auth-issuer: it exchanges the caller's token, and with auth off a call has none"
	}
	if key, msg := e.Guard.check(); msg != "" {
		return key, msg
	}
	for _, name := range slices.Sorted(maps.Keys(e.Overrides)) {
		if ov := e.Overrides[name]; ov != nil {
			if key, msg := ov.Guard.check(); msg != "" {
				return keyChild("overrides", name) + "." + key, msg
			}
		}
	}
	return "", ""
}

// check is what the binary adds to a view: a path of its own, not one of
// its endpoints, and scopes, which only auth gives a caller.
func (s *serverEntry) check(authOn bool) (key, msg string) {
	switch {
	case s == nil:
		return "", null
	case s.Path == "":
		return "path", "missing"
	case s.Path == "/healthz" || s.Path == "/readyz":
		return "path", s.Path + " is the binary's own endpoint"
	case !authOn && s.Scopes != nil:
		return "scopes", noScope
	}
	if key, msg := s.Guard.check(); msg != "" {
		return key, msg
	}
	for j, sc := range s.Scopes {
		if !validScope(sc) {
			return fmt.Sprintf("scopes[%d]", j), fmt.Sprintf("%q is not an OAuth scope: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", sc)
		}
	}
	return "", ""
}

// validated is c, or what package gateway's Options.Validate finds wrong
// with it (the views, the upstreams' names, each upstream.Options'), at
// the key that set the field it names.
func (c *upstreamsConfig) validated() (*upstreamsConfig, error) {
	var oe *gateway.OptionError
	if err := (&gateway.Options{Upstreams: upstreamOptions(c), Views: gatewayViews(c)}).Validate(); errors.As(err, &oe) {
		return nil, c.at(c.keyOf(oe.Field), oe.Problem)
	} else if err != nil {
		return nil, err
	}
	return c, nil
}

// fieldPart is a part of a field path as packages upstream and gateway
// write it: [1], ["a key"] or .Field.
var fieldPart = regexp.MustCompile(`\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]|\.?(\w+)`)

// fileKeys are the keys of the fields whose key is not their name with its
// first letter lowercased.
var fileKeys = map[string]string{"URL": "url", "Views": "servers", "BreakerMinCalls": "breaker.minCalls", "BreakerProbeInterval": "breaker.probeInterval", "PerCaller": "sessions"}

// keyOf is the key path of the file that sets a field (Views[1].Tools[0]:
// servers[1].tools[0]; Upstreams[0].Overrides["a.b"].Name:
// upstreams[0].overrides.'a.b'.name; Upstreams[0].Credentials.TokenURL:
// upstreams[0].credentials.clientCredentials.tokenURL).
func (c *upstreamsConfig) keyOf(field string) (key string) {
	i := 0 // the last index: an upstream's, before its Credentials
	for _, m := range fieldPart.FindAllStringSubmatch(field, -1) {
		if k, err := strconv.Unquote(m[2]); err == nil {
			key = keyChild(key, k)
		} else if m[1] != "" {
			key += "[" + m[1] + "]"
			i, _ = strconv.Atoi(m[1])
		} else if m[3] == "Credentials" {
			kind, _, _ := c.upstreams[i].Credentials.kind()
			key += ".credentials." + kind
		} else {
			key = strings.TrimPrefix(key+"."+cmp.Or(fileKeys[m[3]], strings.ToLower(m[3][:1])+m[3][1:]), ".")
		}
	}
	return key
}

// at is an error at key path p, on its line or on that of the nearest
// path above it that the file holds (a mapping's, for a key missing from
// it).
func (c *upstreamsConfig) at(p, msg string) error {
	q := p
	for _, ok := c.lines[q]; !ok && q != ""; _, ok = c.lines[q] {
		q = q[:max(strings.LastIndexAny(q, ".["), 0)]
	}
	return &configError{file: c.file, line: c.lines[q], path: p, msg: msg}
}

// buildCredentials makes e's upstream.Credentials from their file
// (relative to dir), and the digest of that file a reload compares.
func (e *upstreamEntry) buildCredentials(dir string) (err error) {
	kind, _, oauth := e.Credentials.kind()
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
	// The digest is read before the credentials: a file changed between
	// the two reads is then a change the next reload sees (and reconnects
	// for), never new contents taken for the ones in use.
	data, _ := readOperatorFile(p, maxSecretFile)
	e.digest = fmt.Sprintf("%x", sha256.Sum256(data))
	if oauth == nil {
		e.creds, err = upstream.StaticHeaders(p)
	} else {
		build := upstream.ClientCredentials
		if kind == "tokenExchange" {
			build = upstream.TokenExchange
		}
		e.creds, err = build(upstream.OAuth{TokenURL: oauth.TokenURL, ClientID: oauth.ClientID, ClientSecretFile: p,
			Scopes: oauth.Scopes, Resource: oauth.Resource, Audience: oauth.Audience})
	}
	return err
}

// fingerprint is what a reload compares: the entry as the file says it,
// and its credentials file's contents.
func (e *upstreamEntry) fingerprint() string {
	b, _ := json.Marshal(e) // the exported fields; maps sorted
	return string(b) + e.digest
}

// options are the upstream.Options of the entry: each field of e sets the
// option of its name, converted.
func (e *upstreamEntry) options() upstream.Options {
	o := upstream.Options{Credentials: e.creds, BreakerMinCalls: int(e.Breaker.MinCalls),
		BreakerProbeInterval: time.Duration(e.Breaker.ProbeInterval), RetryIdempotent: e.Retries.Idempotent,
		Allow: e.Allow.rule(), RateLimit: e.RateLimit.limit(), PerCaller: e.Sessions == "perCaller"}
	if e.Overrides != nil {
		o.Overrides = make(map[string]upstream.Override, len(e.Overrides))
		for name, ov := range e.Overrides {
			if ov == nil {
				ov = &overrideEntry{} // changes nothing: Validate says so
			}
			o.Overrides[name] = upstream.Override{Name: ov.Name, Title: ov.Title, Description: ov.Description,
				Annotations: ov.Annotations, Allow: ov.Allow.rule(), RateLimit: ov.RateLimit.limit()}
		}
	}
	if e.Breaker.Disabled {
		o.BreakerMinCalls = -1
	}
	from, to := reflect.ValueOf(e).Elem(), reflect.ValueOf(&o).Elem()
	for i := range from.NumField() {
		if f := to.FieldByName(from.Type().Field(i).Name); f.IsValid() && from.Field(i).CanConvert(f.Type()) {
			f.Set(from.Field(i).Convert(f.Type()))
		}
	}
	return o
}
