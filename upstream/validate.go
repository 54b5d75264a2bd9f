package upstream

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp/internal/caller"
	"github.com/wymcp/wymcp/internal/cleartext"
)

// OptionError is what is wrong with one field of [Options] (the errors of
// [Options.Validate]) or of [OAuth] (those of [ClientCredentials] and
// [TokenExchange]), or with the file [StaticHeaders] reads (Field ""). Field
// names the field as Go writes it, with the index or key of an item below
// it (URL, Include[1], ToolScopes["echo"][0], ClientSecretFile), so that a
// program reading a configuration file can point at the key that set it.
type OptionError struct {
	Field   string
	Problem string
	of      string // what Field is of, for Error ("token exchange"); "" for Options
	err     error  // what the Problem says, when it is another error's
}

func (e *OptionError) Error() string {
	if e.of == "" {
		return "upstream: Options." + e.Field + ": " + e.Problem
	}
	return "upstream: " + e.of + ": " + strings.TrimPrefix(e.Field+": ", ": ") + e.Problem
}

// Unwrap is the error that made the Problem (a file that cannot be read,
// say), or nil.
func (e *OptionError) Unwrap() error { return e.err }

// Validate reports the first thing wrong with o, as an [*OptionError],
// that Connect would fail on only later or would silently take as
// meaning something else: a Name that is not 1 to 64 characters of a
// tool name, a URL that is not http or https (or holds a user name or a
// fragment), a Prefix outside the tool name's alphabet, an Include or
// Exclude pattern path.Match refuses, a scope that is not an RFC 6749
// scope token, a tool of ToolScopes without one, Versions that are empty,
// unknown or repeated, an Override that changes nothing or whose Name is
// not a tool name (two naming the same are the upstream's order's to
// decide: Override), a negative duration or size, and
// Credentials that would travel over plain http to a host
// that is not loopback without AllowCleartextCredentials. Connect calls it
// first. It reads the URLs only: it neither resolves nor dials.
func (o *Options) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &OptionError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if o.Name == "" {
		return bad("Name", "is required")
	} else if !validName(o.Name) {
		return bad("Name", "%q must be 1 to 64 letters, digits, '_', '.' or '-'", o.Name)
	}
	if o.Command != "" || o.URL == "" {
		if err := o.validateStdio(); err != nil {
			return err
		}
	} else if msg := urlProblem(o.URL); msg != "" {
		return bad("URL", "%s", msg)
	} else if err := o.httpOnly(); err != nil {
		return err
	}
	if o.Prefix != "" && !validName(o.Prefix) {
		return bad("Prefix", "%q may hold only letters, digits, '_', '.' and '-' (the characters of a tool name), at most 64", o.Prefix)
	}
	for _, f := range []struct {
		name string
		list []string
	}{{"Include", o.Include}, {"Exclude", o.Exclude}} {
		for i, p := range f.list {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return bad(fmt.Sprintf("%s[%d]", f.name, i), "%q is not a path.Match pattern", p)
			}
		}
	}
	if err := o.RateLimit.Validate(); err != nil {
		return bad("RateLimit", "%v", err)
	}
	if err := checkScopes("Scopes", o.Scopes); err != nil {
		return err
	}
	for _, tool := range slices.Sorted(maps.Keys(o.ToolScopes)) {
		field := "ToolScopes[" + strconv.Quote(tool) + "]"
		if len(o.ToolScopes[tool]) == 0 {
			return bad(field, "no scope; leave the tool out instead")
		}
		if err := checkScopes(field, o.ToolScopes[tool]); err != nil {
			return err
		}
	}
	if o.Versions != nil && len(o.Versions) == 0 {
		return bad("Versions", "empty; nil means every revision the gateway speaks")
	}
	for i, v := range o.Versions {
		if !slices.Contains(knownVersions, v) {
			return bad(fmt.Sprintf("Versions[%d]", i), "%q is not one of %s", v, strings.Join(knownVersions, ", "))
		} else if slices.Index(o.Versions, v) < i {
			return bad(fmt.Sprintf("Versions[%d]", i), "%s is listed twice", v)
		}
	}
	for _, tool := range slices.Sorted(maps.Keys(o.Overrides)) {
		field, ov := "Overrides["+strconv.Quote(tool)+"]", o.Overrides[tool]
		switch {
		case tool == "":
			return bad(field, "names no tool")
		case ov.Name == "" && ov.Title == "" && ov.Description == "" && ov.Annotations == nil && ov.Allow == nil && ov.RateLimit.IsZero():
			return bad(field, "changes nothing; leave it out")
		case ov.Name != "" && !validName(ov.Name):
			return bad(field+".Name", "%q must be 1 to 64 letters, digits, '_', '.' or '-'", ov.Name)
		}
		if err := ov.RateLimit.Validate(); err != nil {
			return bad(field+".RateLimit", "%v", err)
		}
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"CallTimeout", o.CallTimeout}, {"ConnectTimeout", o.ConnectTimeout}, {"BreakerProbeInterval", o.BreakerProbeInterval}, {"IdleTimeout", o.IdleTimeout}, {"Refresh", o.Refresh}} {
		if f.d < 0 {
			return bad(f.name, "%v is negative", f.d)
		}
	}
	for _, f := range []struct {
		name string
		n    int64
	}{{"MaxConns", int64(o.MaxConns)}, {"MaxInFlight", int64(o.MaxInFlight)}, {"MaxResponseBytes", o.MaxResponseBytes}, {"MaxResponseHeaderBytes", o.MaxResponseHeaderBytes}} {
		if f.n < 0 {
			return bad(f.name, "%d is negative", f.n)
		}
	}
	return o.checkCleartext()
}

// checkCleartext refuses credentials that would travel unencrypted to
// another machine: an upstream URL or a token endpoint that is plain http
// to a host that is not loopback, when the upstream has credentials (the
// gateway's secret, and for an exchange the caller's token, would be
// readable on the way), unless AllowCleartextCredentials says the
// operator knows (a network encrypted underneath, a sidecar).
func (o *Options) checkCleartext() error {
	const fix = "; use https, or allow cleartext credentials"
	switch {
	case o.Credentials == nil || o.AllowCleartextCredentials:
	case cleartext.Remote(o.URL):
		return &OptionError{Field: "URL", Problem: fmt.Sprintf("%q is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted", o.URL) + fix}
	case cleartext.Remote(o.Credentials.tokenURL()):
		return &OptionError{Field: "Credentials.TokenURL", Problem: fmt.Sprintf("%q is plain http to a host that is not loopback: the client secret (and, for an exchange, the caller's token) would travel unencrypted", o.Credentials.tokenURL()) + fix}
	}
	return nil
}

// urlProblem is what is wrong with raw as an upstream's URL, or "".
func urlProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "is required"
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("%q is not an http or https URL", raw)
	case u.User != nil:
		// Not the URL itself: it holds a secret.
		return "holds a user name or password; give the upstream's credentials in Credentials"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Sprintf("%q has a fragment", raw)
	}
	return ""
}

func checkScopes(field string, scopes []string) error {
	for i, s := range scopes {
		if !caller.ValidScope(s) {
			return &OptionError{Field: fmt.Sprintf("%s[%d]", field, i), Problem: fmt.Sprintf("%q is not an OAuth scope: printable ASCII without space, '\"' or '\\' (RFC 6749 §3.3)", s)}
		}
	}
	return nil
}

// validName reports whether s is 1 to maxName characters of a tool name:
// A-Z a-z 0-9 _ . -
func validName(s string) bool {
	return s != "" && len(s) <= maxName && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == ""
}
