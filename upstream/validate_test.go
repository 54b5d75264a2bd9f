package upstream

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wymcp/wymcp/protocol"
)

// TestValidate (issue 40): each thing Connect would fail on later, or
// take silently, is an *OptionError naming the field, the index or key
// below it, and what is wrong; Connect returns it before any request.
func TestValidate(t *testing.T) {
	ok := Options{Name: "up", URL: "http://127.0.0.1:9/mcp"}
	for _, tc := range []struct {
		change       func(*Options)
		field, probl string
	}{
		{func(o *Options) { o.Name = "" }, "Name", "is required"},
		{func(o *Options) { o.Name = "a b" }, "Name", `"a b" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{func(o *Options) { o.Name = strings.Repeat("a", 65) }, "Name", `"` + strings.Repeat("a", 65) + `" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{func(o *Options) { o.URL = "" }, "URL", "is required"},
		{func(o *Options) { o.URL = "ftp://h/" }, "URL", `"ftp://h/" is not an http or https URL`},
		{func(o *Options) { o.URL = "http:///mcp" }, "URL", `"http:///mcp" is not an http or https URL`},
		{func(o *Options) { o.URL = "http://u:s3cret@h/" }, "URL", "holds a user name or password; give the upstream's credentials in Credentials"},
		{func(o *Options) { o.URL = "http://h/#f" }, "URL", `"http://h/#f" has a fragment`},
		{func(o *Options) { o.Prefix = "a:" }, "Prefix", `"a:" may hold only letters, digits, '_', '.' and '-' (the characters of a tool name), at most 64`},
		{func(o *Options) { o.Include = []string{"a", "["} }, "Include[1]", `"[" is not a path.Match pattern`},
		{func(o *Options) { o.Exclude = []string{""} }, "Exclude[0]", `"" is not a path.Match pattern`},
		{func(o *Options) { o.Scopes = []string{"a b"} }, "Scopes[0]", `"a b" is not an OAuth scope: printable ASCII without space, '"' or '\' (RFC 6749 §3.3)`},
		{func(o *Options) { o.ToolScopes = map[string][]string{"z": {"s"}, "a.b": nil} }, `ToolScopes["a.b"]`, "no scope; leave the tool out instead"},
		{func(o *Options) { o.ToolScopes = map[string][]string{"echo": {"s", "\""}} }, `ToolScopes["echo"][1]`, `"\"" is not an OAuth scope: printable ASCII without space, '"' or '\' (RFC 6749 §3.3)`},
		{func(o *Options) { o.Versions = []string{} }, "Versions", "empty; nil means every revision the gateway speaks"},
		{func(o *Options) { o.Versions = []string{"2024-11-05"} }, "Versions[0]", `"2024-11-05" is not one of 2026-07-28, 2025-11-25, 2025-06-18`},
		{func(o *Options) { o.Versions = []string{"2025-11-25", "2025-11-25"} }, "Versions[1]", "2025-11-25 is listed twice"},
		{func(o *Options) { o.Overrides = map[string]Override{"": {Title: "t"}} }, `Overrides[""]`, "names no tool"},
		{func(o *Options) { o.Overrides = map[string]Override{"echo": {}} }, `Overrides["echo"]`, "changes nothing; leave it out"},
		{func(o *Options) { o.Overrides = map[string]Override{"echo": {Name: strings.Repeat("n", 65)}} }, `Overrides["echo"].Name`, `"` + strings.Repeat("n", 65) + `" must be 1 to 64 letters, digits, '_', '.' or '-'`},
		{func(o *Options) { o.Refresh = -time.Second }, "Refresh", "-1s is negative"},
		{func(o *Options) { o.CallTimeout = -time.Second }, "CallTimeout", "-1s is negative"},
		{func(o *Options) { o.ConnectTimeout = -1 }, "ConnectTimeout", "-1ns is negative"},
		{func(o *Options) { o.BreakerProbeInterval = -time.Second }, "BreakerProbeInterval", "-1s is negative"},
		{func(o *Options) { o.IdleTimeout = -time.Second }, "IdleTimeout", "-1s is negative"},
		{func(o *Options) { o.MaxConns = -1 }, "MaxConns", "-1 is negative"},
		{func(o *Options) { o.MaxInFlight = -1 }, "MaxInFlight", "-1 is negative"},
		{func(o *Options) { o.MaxResponseBytes = -1 }, "MaxResponseBytes", "-1 is negative"},
		{func(o *Options) { o.MaxResponseHeaderBytes = -1 }, "MaxResponseHeaderBytes", "-1 is negative"},
	} {
		o := ok
		tc.change(&o)
		err := o.Validate()
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Field != tc.field || oe.Problem != tc.probl || err.Error() != "upstream: Options."+tc.field+": "+tc.probl {
			t.Errorf("%s: %v\nwant %s: %s", tc.field, err, tc.field, tc.probl)
			continue
		}
		trap := &trapTransport{}
		o.HTTPClient = &http.Client{Transport: trap}
		if _, err := Connect(context.Background(), o); !errors.As(err, &oe) || oe.Field != tc.field || trap.n.Load() != 0 {
			t.Errorf("%s: Connect: %v, %d requests", tc.field, err, trap.n.Load())
		}
	}
	// The defaults, and what they may be set to, pass.
	good := ok
	good.Prefix, good.Include, good.Exclude = "ev_", []string{"get-*"}, []string{"get-secret*"}
	good.Scopes, good.ToolScopes, good.Versions = []string{"tools:use"}, map[string][]string{"echo": {"tools:echo"}}, []string{"2025-06-18"}
	good.BreakerMinCalls, good.Refresh = -1, time.Millisecond // short refreshes are the embedder's to choose
	good.Overrides = map[string]Override{"echo": {Name: "say"}, "add": {Description: "Adds."}, "get": {Annotations: &protocol.ToolAnnotations{}}}
	for _, o := range []Options{ok, good} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
