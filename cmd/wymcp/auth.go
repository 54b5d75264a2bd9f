package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/auth"
	"github.com/wymcp/wymcp/tools"
)

// authFlags are the -auth-* flags. Without -auth-issuer auth is off and
// every other -auth-* flag is refused (a flag that silently does nothing
// is how a server ends up open).
type authFlags struct {
	issuer, audience, jwks, introspect, clientID, secretFile string
	// toolScopes are the -auth-scope TOOL=SCOPE[,SCOPE] values, in order.
	toolScopes []toolScope
	required   []string
	// scopeChallenge is -auth-scope-challenge
	// (wymcp.AuthOptions.ScopeChallenge).
	scopeChallenge bool
}

type toolScope struct {
	tool   string
	scopes []string
}

func (a *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.issuer, "auth-issuer", "", "OAuth authorization server `URL` (its issuer identifier, compared exactly with a token's iss); turns auth on")
	fs.StringVar(&a.audience, "auth-audience", "", "this server's canonical resource `URI`, which tokens must name in aud (default: the server's own URL, http://<listen address><path>)")
	fs.StringVar(&a.jwks, "auth-jwks", "", "JWT access tokens: the JWKS `FILE|URL` their signatures are checked against (a URL is the issuer's jwks_uri: https, or http to a loopback address)")
	fs.StringVar(&a.introspect, "auth-introspect", "", "opaque access tokens: the issuer's RFC 7662 introspection endpoint `URL` (needs -auth-client-id and -auth-client-secret-file)")
	fs.StringVar(&a.clientID, "auth-client-id", "", "this server's OAuth client `id` at the introspection endpoint")
	fs.StringVar(&a.secretFile, "auth-client-secret-file", "", "`file` holding this server's client secret for the introspection endpoint (a file, not a flag: flags show in ps)")
	fs.Func("auth-scope", "`TOOL=SCOPE[,SCOPE]`: scopes a caller needs to call and see TOOL (repeatable)", func(v string) error {
		tool, list, ok := strings.Cut(v, "=")
		if !ok || tool == "" || list == "" {
			return fmt.Errorf("want TOOL=SCOPE[,SCOPE], got %q", v)
		}
		ts := toolScope{tool: tool}
		for s := range strings.SplitSeq(list, ",") {
			if !validScope(s) {
				return fmt.Errorf("invalid scope %q: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", s)
			}
			ts.scopes = append(ts.scopes, s)
		}
		a.toolScopes = append(a.toolScopes, ts)
		return nil
	})
	fs.BoolVar(&a.scopeChallenge, "auth-scope-challenge", false, "answer a call of a tool whose -auth-scope (or upstream scopes) the caller lacks 403 insufficient_scope naming them, so that a client can ask for them (step-up), at the cost of telling the caller that the tool exists; by default it is answered as an unknown tool (-32602), as tools/list hides it")
	fs.Func("auth-required-scope", "`SCOPE` every request needs (repeatable)", func(s string) error {
		if !validScope(s) {
			return fmt.Errorf("invalid scope %q: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", s)
		}
		a.required = append(a.required, s)
		return nil
	})
}

// validScope is RFC 6749 §3.3's scope-token: the check tools.WithScopes
// and wymcp.AuthOptions make, made here so that a bad flag is a usage
// error (exit 2), not a start-up failure.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validate checks the flags' combinations; addr is -addr, for the
// default audience.
func (a *authFlags) validate(addr string) error {
	if a.issuer == "" {
		for _, f := range []struct{ name, v string }{
			{"-auth-audience", a.audience}, {"-auth-jwks", a.jwks}, {"-auth-introspect", a.introspect},
			{"-auth-client-id", a.clientID}, {"-auth-client-secret-file", a.secretFile},
		} {
			if f.v != "" {
				return fmt.Errorf("%s needs -auth-issuer (auth is off without it)", f.name)
			}
		}
		if len(a.toolScopes) > 0 {
			return errors.New("-auth-scope needs -auth-issuer (auth is off without it)")
		}
		if len(a.required) > 0 {
			return errors.New("-auth-required-scope needs -auth-issuer (auth is off without it)")
		}
		if a.scopeChallenge {
			return errors.New("-auth-scope-challenge needs -auth-issuer (auth is off without it)")
		}
		return nil
	}
	if u, err := url.Parse(a.issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("-auth-issuer %q must be an absolute http(s) URL", a.issuer)
	}
	if a.jwks == "" && a.introspect == "" {
		return errors.New("-auth-issuer needs -auth-jwks (JWT access tokens) or -auth-introspect (opaque ones), or both")
	}
	if a.introspect != "" && (a.clientID == "" || a.secretFile == "") {
		return errors.New("-auth-introspect needs -auth-client-id and -auth-client-secret-file")
	}
	if a.introspect == "" && (a.clientID != "" || a.secretFile != "") {
		return errors.New("-auth-client-id and -auth-client-secret-file are for -auth-introspect")
	}
	if a.audience == "" {
		// The default is the listener's own URL, which names no host
		// when the server listens on every address.
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || host == "" || (ip != nil && ip.IsUnspecified()) {
			return fmt.Errorf("-addr %q names no host, so the server's URL is unknown: set -auth-audience to the URI clients use", addr)
		}
	}
	return nil
}

// enabled reports whether auth is on.
func (a *authFlags) enabled() bool { return a.issuer != "" }

// scopeTools applies -auth-scope to the tool set; naming a tool the set
// does not have is a usage error.
func (a *authFlags) scopeTools(ts []*tools.Tool) ([]*tools.Tool, error) {
	ts = slices.Clone(ts)
	for _, s := range a.toolScopes {
		i := slices.IndexFunc(ts, func(t *tools.Tool) bool { return t.Name() == s.tool })
		if i < 0 {
			names := make([]string, len(ts))
			for j, t := range ts {
				names[j] = t.Name()
			}
			return nil, usageError{err: fmt.Errorf("-auth-scope %s: no tool %q in this set (%s)", s.tool, s.tool, strings.Join(names, ", "))}
		}
		t, err := tools.RequireScopes(ts[i], s.scopes...)
		if err != nil {
			return nil, usageError{err: fmt.Errorf("-auth-scope %s: %w", s.tool, err)}
		}
		ts[i] = t
	}
	return ts, nil
}

// serverAuth is one protected resource: a view's authentication and its
// RFC 9728 metadata document.
type serverAuth struct {
	options  *wymcp.AuthOptions
	metadata *auth.MetadataHandler
}

// authKeys are what every view's authenticator shares: the issuer's keys
// (one JWKS, fetched once) and the introspection client's secret.
type authKeys struct {
	jwks   *auth.JWKS
	secret string
	// remote is whether jwks is fetched from a URL.
	remote bool
}

// fetch starts fetching remote keys, once every view's auth is built
// (nothing is fetched for a start that fails): in the background (Ready
// starts the fetch and never waits on it), so that a wrong URL shows in
// the log at once (the JWKS logs a failed fetch) and the first request
// finds the keys ready, but an authorization server still starting does
// not stop ours.
func (k *authKeys) fetch(ctx context.Context) {
	if k.remote {
		_ = k.jwks.Ready(ctx)
	}
}

// keys reads the JWKS (or starts fetching it) and the client secret.
func (a *authFlags) keys(logger *slog.Logger) (*authKeys, error) {
	k := &authKeys{}
	var err error
	if a.jwks != "" {
		if strings.HasPrefix(a.jwks, "https://") || strings.HasPrefix(a.jwks, "http://") {
			if k.jwks, err = auth.NewRemoteJWKS(a.jwks, &auth.JWKSOptions{Logger: logger}); err != nil {
				return nil, usageError{err: fmt.Errorf("-auth-jwks: %w", err)}
			}
			k.remote = true
		} else {
			doc, err := readOperatorFile(a.jwks, maxJWKSFile)
			if err != nil {
				return nil, usageError{err: fmt.Errorf("-auth-jwks: %w", err)}
			}
			if k.jwks, err = auth.ParseJWKS(doc); err != nil {
				return nil, usageError{err: fmt.Errorf("-auth-jwks %s: %w", a.jwks, err)}
			}
		}
	}
	if a.introspect != "" {
		secret, err := readOperatorFile(a.secretFile, maxSecretFile)
		if err != nil {
			return nil, usageError{err: fmt.Errorf("-auth-client-secret-file: %w", err)}
		}
		if k.secret = strings.TrimSpace(string(secret)); k.secret == "" {
			return nil, usageError{err: fmt.Errorf("-auth-client-secret-file %s is empty", a.secretFile)}
		}
	}
	return k, nil
}

// resourceURI is the resource URI of the view at path (docs/auth.md): the
// server's URL (base, scheme and host) with the view's path, or, with
// -auth-audience, that URI's scheme and host with the view's path. With
// views is false for the one endpoint of -path, whose audience is
// -auth-audience as given.
func (a *authFlags) resourceURI(base, path string, views bool) string {
	if a.audience == "" {
		return base + path
	}
	if !views {
		return a.audience
	}
	u, err := url.Parse(a.audience)
	if err != nil {
		return a.audience // refused by NewMetadataHandler, naming it
	}
	return u.Scheme + "://" + u.Host + path
}

// resource makes one protected resource: the authenticator(s) checking
// that tokens name audience, and the metadata document. required are the
// scopes every request needs (-auth-required-scope and the view's
// scopes), supported the ones the document lists besides them.
func (a *authFlags) resource(k *authKeys, audience string, required, supported []string, logger *slog.Logger) (*serverAuth, error) {
	scopes := slices.Clone(required)
	for _, s := range supported {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	prm, err := auth.NewMetadataHandler(auth.ResourceMetadata{
		Resource:             audience,
		AuthorizationServers: []string{a.issuer},
		ScopesSupported:      scopes,
	})
	if err != nil {
		return nil, usageError{err: fmt.Errorf("-auth-audience: %w", err)}
	}
	var jwtAuth *auth.JWT
	if k.jwks != nil {
		if jwtAuth, err = auth.NewJWT(a.issuer, audience, k.jwks, nil); err != nil {
			return nil, usageError{err: err}
		}
	}
	var intro *auth.Introspection
	if a.introspect != "" {
		if intro, err = auth.NewIntrospection(a.introspect, a.clientID, k.secret, audience, &auth.IntrospectionOptions{Issuer: a.issuer}); err != nil {
			return nil, usageError{err: fmt.Errorf("-auth-introspect: %w", err)}
		}
	}
	var authn wymcp.Authenticator
	switch {
	case jwtAuth != nil && intro != nil:
		authn = eitherToken{jwt: jwtAuth, opaque: intro}
	case jwtAuth != nil:
		authn = jwtAuth
	default:
		authn = intro
	}
	logger.Info("auth on", "issuer", a.issuer, "audience", audience, "jwks", a.jwks, "introspect", a.introspect,
		"required_scopes", strings.Join(required, " "), "scope_challenge", a.scopeChallenge, "metadata", prm.URL())
	return &serverAuth{
		options: &wymcp.AuthOptions{
			Authenticator:    authn,
			ResourceMetadata: prm.URL(),
			RequiredScopes:   required,
			ScopeChallenge:   a.scopeChallenge,
		},
		metadata: prm,
	}, nil
}

// eitherToken serves a server given both -auth-jwks and -auth-introspect:
// a token shaped like a JWS (three base64url parts) is verified as a JWT,
// any other is introspected. An authorization server that issues both
// (JWTs for some clients, opaque tokens for others) is served whole, and no
// JWT ever leaves the server for introspection.
type eitherToken struct {
	jwt    *auth.JWT
	opaque *auth.Introspection
}

func (e eitherToken) Authenticate(ctx context.Context, r *http.Request) (*wymcp.Principal, error) {
	token, err := auth.BearerToken(r)
	if err != nil {
		return nil, err
	}
	// Each authenticator reads the same token of r again.
	if strings.Count(token, ".") == 2 {
		return e.jwt.Authenticate(ctx, r)
	}
	return e.opaque.Authenticate(ctx, r)
}

// Ready is the JWT authenticator's (introspection has no keys to wait
// for): it makes eitherToken a wymcp.Readier, so that /readyz answers 503
// while the JWKS was never fetched, as it does for -auth-jwks alone.
func (e eitherToken) Ready(ctx context.Context) error { return e.jwt.Ready(ctx) }
