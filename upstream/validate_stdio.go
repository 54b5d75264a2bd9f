package upstream

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// validateStdio checks the options of an upstream the gateway runs
// (Command), or reports that neither URL nor Command is given.
func (o *Options) validateStdio() error {
	bad := func(field, format string, args ...any) error {
		return &OptionError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case o.Command == "":
		return bad("URL", "is required")
	case o.URL != "":
		return bad("Command", "is given with a URL: an upstream is a program the gateway runs or a server at a URL, not both")
	case runtime.GOOS != "linux":
		return bad("Command", "stdio upstreams need Linux (their cleanup is Linux's)")
	case strings.ContainsRune(o.Command, 0):
		return bad("Command", "holds a NUL byte")
	case o.Dir != "" && !filepath.IsAbs(o.Dir):
		return bad("Dir", "%q is not an absolute path", o.Dir)
	}
	for i, a := range o.Args {
		if strings.ContainsRune(a, 0) {
			return bad(fmt.Sprintf("Args[%d]", i), "holds a NUL byte")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		field := "Env[" + strconv.Quote(k) + "]"
		switch {
		case !envName(k):
			return bad(field, "is not an environment variable's name (letters, digits and '_', not first a digit)")
		case k == reaperEnv:
			return bad(field, "is the gateway's own")
		case strings.ContainsRune(o.Env[k], 0):
			return bad(field, "holds a NUL byte")
		}
	}
	for i, k := range o.InheritEnv {
		if k != "*" && !envName(k) {
			return bad(fmt.Sprintf("InheritEnv[%d]", i), "%q is not an environment variable's name, nor \"*\"", k)
		}
	}
	if o.MaxCallers < 0 {
		return bad("MaxCallers", "%d is negative", o.MaxCallers)
	} else if o.MaxCallers != 0 && !o.PerCaller {
		return bad("MaxCallers", "applies only with PerCaller")
	}
	// What only an HTTP upstream has: given for a child, it would be
	// silently ignored.
	switch {
	case o.Credentials != nil:
		return bad("Credentials", "an upstream the gateway runs has no credentials (give it secrets in Env)")
	case o.HTTPClient != nil:
		return bad("HTTPClient", "an upstream the gateway runs is not reached over HTTP")
	case o.MaxConns != 0:
		return bad("MaxConns", "an upstream the gateway runs has one pipe, not connections (MaxInFlight bounds its calls)")
	case o.MaxResponseHeaderBytes != 0:
		return bad("MaxResponseHeaderBytes", "an upstream the gateway runs sends no headers")
	case o.IdleTimeout != 0:
		return bad("IdleTimeout", "an upstream the gateway runs has no idle connections")
	case o.AllowCleartextCredentials:
		return bad("AllowCleartextCredentials", "an upstream the gateway runs has no credentials")
	}
	return nil
}

// httpOnly refuses what only an upstream the gateway runs has, given with
// a URL.
func (o *Options) httpOnly() error {
	field := ""
	switch {
	case o.Args != nil:
		field = "Args"
	case o.Env != nil:
		field = "Env"
	case o.InheritEnv != nil:
		field = "InheritEnv"
	case o.Dir != "":
		field = "Dir"
	case o.MaxCallers < 0:
		return &OptionError{Field: "MaxCallers", Problem: fmt.Sprintf("%d is negative", o.MaxCallers)}
	case o.MaxCallers != 0 && !o.PerCaller:
		return &OptionError{Field: "MaxCallers", Problem: "applies only with PerCaller"}
	default:
		return nil
	}
	return &OptionError{Field: field, Problem: "is for an upstream the gateway runs (Command), not one at a URL"}
}

// envName reports whether k is a portable environment variable's name.
func envName(k string) bool {
	if k == "" || ('0' <= k[0] && k[0] <= '9') {
		return false
	}
	return strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}
