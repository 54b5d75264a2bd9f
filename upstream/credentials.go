package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/opfile"
)

// Credentials authenticate the gateway to an upstream. They are the
// gateway's own: the client's token is never passed through (the MCP
// authorization spec forbids it, since the upstream is another audience).
// Build them with [StaticHeaders], [ClientCredentials] or
// [TokenExchange]; nil [Options.Credentials] sends none. Their errors are
// [*OptionError]s naming what is wrong.
//
// The interface is closed (its methods are unexported) so that every
// implementation is one of the three above, each of which keeps secrets
// out of its errors and bounds what it caches.
type Credentials interface {
	// apply sets the request's credential headers. ctx is the call's: for
	// an exchange, it carries the caller whose token is exchanged.
	apply(ctx context.Context, h http.Header) error
	// refused tells the credentials that the upstream refused sent, the
	// header of a request apply set (HTTP 401): the cached token that got
	// it is dropped, once, so the one retry gets a fresh one. retry is
	// false when there is nothing else to send (static headers; a token
	// fetched after a 401 within the refusal backoff): then the 401 is the
	// answer.
	refused(ctx context.Context, sent http.Header) (retry bool)
	// tokenURL is the token endpoint the credentials send their secret
	// to, "" for none (Options.Validate).
	tokenURL() string
}

// maxSecretFile bounds the files of secrets credentials read (StaticHeaders',
// OAuth.ClientSecretFile): a few headers or a secret, not a file given by
// mistake.
const maxSecretFile = 64 << 10

// StaticHeaders reads a file of "Name: value" lines and sends those
// headers on every request to the upstream: an API key, or a long-lived
// bearer token ("Authorization: Bearer …"). Blank lines and lines whose
// first non-blank character is # are ignored; a value is trimmed of the
// spaces and tabs around it; a trailing CR is dropped, so CRLF files read
// the same.
//
// The file is read once, here: a rotated secret takes a new Connect. It
// must be a regular file of at most 64 KiB (a FIFO or a device is refused
// without waiting on it). It is refused, with the number of the offending line and never its value
// (which is the secret), when a line has no colon, a name is not an HTTP
// token or a value holds control characters (the rules of
// golang.org/x/net/http/httpguts, which net/http enforces on the wire), a
// value is empty, a name repeats, or a name is one the gateway or HTTP
// itself sets: Host, Content-Length, Content-Type, Accept, Mcp-Method,
// Mcp-Name, MCP-Protocol-Version, Mcp-Session-Id, Traceparent,
// Tracestate, any Mcp-Param-*, and the hop-by-hop and encoding headers
// (Connection, Keep-Alive, Proxy-Connection, TE, Trailer,
// Transfer-Encoding, Upgrade, Accept-Encoding, Content-Encoding). Names
// compare case-insensitively. Setting one of those would break the
// protocol rather than authenticate: the upstream routes on the Mcp-*
// headers, and the trace headers belong to the call.
//
// refused does nothing: there is no other value to try, so a 401 from the
// upstream is the call's answer.
func StaticHeaders(path string) (Credentials, error) {
	data, err := opfile.Read(path, maxSecretFile)
	if err != nil {
		return nil, &OptionError{of: "static headers", Problem: err.Error(), err: err}
	}
	h, err := parseStaticHeaders(data)
	if err != nil {
		return nil, &OptionError{of: "static headers", Problem: path + ": " + err.Error(), err: err}
	}
	return &staticHeaders{h: h}, nil
}

// reservedHeaders are the names a static-headers file may not set, in
// canonical form (see StaticHeaders).
var reservedHeaders = map[string]bool{
	"Host":                 true,
	"Content-Length":       true,
	"Content-Type":         true,
	"Accept":               true,
	"Mcp-Method":           true,
	"Mcp-Name":             true,
	"Mcp-Protocol-Version": true,
	"Mcp-Session-Id":       true,
	"Traceparent":          true,
	"Tracestate":           true,
	"Connection":           true,
	"Keep-Alive":           true,
	"Proxy-Connection":     true,
	"Te":                   true,
	"Trailer":              true,
	"Transfer-Encoding":    true,
	"Upgrade":              true,
	"Accept-Encoding":      true,
	"Content-Encoding":     true,
}

// parseStaticHeaders reads the lines of a static-headers file. Its errors
// name the line, and the header's name only once it is known to be a
// valid one (a line without a colon may be nothing but a secret).
func parseStaticHeaders(data []byte) (http.Header, error) {
	h := http.Header{}
	firstLine := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxSecretFile+1)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: not a \"Name: value\" line", n)
		}
		if !wire.IsToken(name) {
			return nil, fmt.Errorf("line %d: invalid header name", n)
		}
		key := http.CanonicalHeaderKey(name)
		if reservedHeaders[key] || strings.HasPrefix(key, "Mcp-Param-") {
			return nil, fmt.Errorf("line %d: %s is set by the gateway, not by credentials", n, key)
		}
		if first, dup := firstLine[key]; dup {
			return nil, fmt.Errorf("line %d: %s repeats line %d", n, key, first)
		}
		value = strings.Trim(value, " \t")
		if value == "" {
			return nil, fmt.Errorf("line %d: %s has an empty value", n, key)
		}
		if !validHeaderValue(value) {
			return nil, fmt.Errorf("line %d: %s has a value with control characters", n, key)
		}
		firstLine[key] = n
		h[key] = []string{value}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, errors.New("no headers")
	}
	return h, nil
}

// staticHeaders is StaticHeaders' Credentials.
type staticHeaders struct{ h http.Header }

func (s *staticHeaders) apply(_ context.Context, h http.Header) error {
	for k, v := range s.h {
		// One value each (parseStaticHeaders): the slice is shared by
		// every request, and a request's header must not alias it.
		h[k] = []string{v[0]}
	}
	return nil
}

func (s *staticHeaders) refused(context.Context, http.Header) bool { return false }

func (s *staticHeaders) tokenURL() string { return "" }

// validHeaderValue is httpguts.ValidHeaderFieldValue: no control
// characters but horizontal tab.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// ownKey marks the context of a request the gateway makes for itself, on
// no caller's behalf (own).
type ownKey struct{}

// own returns a context for the gateway's own requests: Connect's, a new
// session's, Close's. It keeps nothing of ctx but its deadline and
// cancellation: no caller's identity may reach these requests' credentials.
func own(ctx context.Context) context.Context {
	return context.WithValue(stripValues{ctx}, ownKey{}, true)
}

// isOwn reports a request the gateway makes for itself.
func isOwn(ctx context.Context) bool {
	v, _ := ctx.Value(ownKey{}).(bool)
	return v
}

// stripValues is ctx without its values.
type stripValues struct{ context.Context }

func (stripValues) Value(any) any { return nil }
