package wire

import (
	"encoding/base64"
	"net/textproto"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The MCP request headers of SEP-2243, in their canonical MIME form (the
// keys net/http's Header map uses). Header names are case-insensitive on
// the wire; values are case-sensitive.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix prefixes a tool argument mirrored by x-mcp-header.
	HeaderParamPrefix = "Mcp-Param-"
)

// Header is the read side of an HTTP header map in canonical form
// (net/http's Header converts to it without a copy).
type Header = map[string][]string

// CheckHeaders applies the header rules of docs/design.md §5, in its row
// order: MCP-Protocol-Version present and equal to the `_meta` version,
// Mcp-Method present and equal to the method, Mcp-Name present and equal to
// params.name (params.uri for resources/read) when the body has one. Each
// failure is -32020. The Mcp-Param-* rows (which need the tool) and
// CheckVersion come next; a header/body version mismatch is checked before
// the version is judged because conformance requires -32020 for a mismatch
// even when the body's version is also unsupported.
func CheckHeaders(h Header, r *Request) *Error {
	v, err := single(h, HeaderProtocolVersion)
	if err != nil {
		return err
	}
	if v == "" {
		return headerError("the MCP-Protocol-Version header is required")
	}
	if v != r.Meta.ProtocolVersion {
		return headerError("the MCP-Protocol-Version header does not match params._meta " + MetaProtocolVersion)
	}
	return checkMethodName(h, r, true)
}

// checkMethodName checks Mcp-Method against the method and Mcp-Name
// against the body's name, each -32020: required when required is set
// (2026-07-28), otherwise checked only when sent (the 2025 era,
// CheckLegacyHeaders).
func checkMethodName(h Header, r *Request, required bool) *Error {
	v, err := single(h, HeaderMethod)
	if err != nil {
		return err
	}
	switch {
	case v == "" && required:
		return headerError("the Mcp-Method header is required")
	case v != "" && v != r.Method:
		return headerError("the Mcp-Method header does not match the request method")
	}
	if body, ok := nameBearer(r); ok {
		if v, err = single(h, HeaderName); err != nil {
			return err
		}
		if v == "" {
			if required {
				return headerError("the Mcp-Name header is required")
			}
			return nil
		}
		got, ok := DecodeHeaderValue(v)
		if !ok {
			return headerError("the Mcp-Name header has an invalid Base64 value")
		}
		if got != body {
			return headerError("the Mcp-Name header does not match the request body")
		}
	}
	return nil
}

// CheckVersion answers -32022 when the request's revision (header and
// `_meta` agree by now) is not 2026-07-28, the one revision a request in
// its envelope speaks, naming every revision vs serves.
func CheckVersion(r *Request, vs *Versions) *Error {
	if r.Meta.ProtocolVersion != Version {
		return vs.Unsupported(r.Meta.ProtocolVersion)
	}
	return nil
}

// nameBearer returns the body value Mcp-Name mirrors, if the method has one
// and the body carries it as a string.
func nameBearer(r *Request) (string, bool) {
	switch r.Method {
	case MethodToolsCall, "prompts/get":
		return unquote(r.Name)
	case "resources/read":
		return unquote(r.URI)
	}
	return "", false
}

// single returns the single value of a header with optional white space
// trimmed (RFC 9110 OWS), "" when absent. A header sent more than once is
// malformed (-32020): two values cannot both mirror one body member.
func single(h Header, key string) (string, *Error) {
	vs := h[key]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return trimOWS(vs[0]), nil
	}
	return "", headerError("the " + key + " header must appear once")
}

// trimOWS trims spaces and tabs from both ends of s: strings.Trim(s, " \t")
// without its general cutset code, which every request ran through for
// what is nearly always nothing to trim (bench/footprint.sh): net/http
// trims the values it parses already.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// base64 sentinel of SEP-2243: a header value that cannot be sent as plain
// ASCII is sent as =?base64?<Base64 of its UTF-8>?=.
const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// DecodeHeaderValue decodes a Mcp-Name or Mcp-Param-* value. A value with the
// exact (lowercase) sentinel prefix and suffix is Base64-decoded with
// standard padding; invalid Base64 or UTF-8 inside it is not ok. Any other
// value, including one with only the prefix or only the suffix, is literal.
func DecodeHeaderValue(v string) (string, bool) {
	if len(v) < len(sentinelPrefix)+len(sentinelSuffix) ||
		!strings.HasPrefix(v, sentinelPrefix) || !strings.HasSuffix(v, sentinelSuffix) {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(v[len(sentinelPrefix) : len(v)-len(sentinelSuffix)])
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

func headerError(msg string) *Error {
	return Errorf(CodeHeaderMismatch, "Header mismatch: "+msg)
}

// CheckParamHeaders checks each x-mcp-header argument of a tool against its
// Mcp-Param-<Name> header (SEP-2243; docs/design.md §5: -32020 on any
// disagreement). The arguments are decoded only for tools that declare such
// headers; arguments that are not an object are left to the method, which
// answers -32602.
func CheckParamHeaders(h Header, params []HeaderParam, arguments RawJSON) *Error {
	if len(params) == 0 {
		return nil
	}
	var args map[string]any
	if arguments != nil {
		if arguments[0] != '{' || Unmarshal(arguments, &args) != nil {
			return nil
		}
	}
	for _, p := range params {
		key := textproto.CanonicalMIMEHeaderKey(HeaderParamPrefix + p.Name)
		value, perr := single(h, key)
		if perr != nil {
			return perr
		}
		_, present := h[key]
		if perr := checkParamHeader(p.Name, value, present, lookup(args, p.Path)); perr != nil {
			return perr
		}
	}
	return nil
}

// lookup returns the value at path in args, nil when absent or null.
func lookup(args map[string]any, path []string) any {
	var v any = args
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// checkParamHeader compares one Mcp-Param-<Name> header with the argument it
// mirrors (SEP-2243; docs/design.md §5: -32020 on any disagreement). header
// is the header's value with OWS trimmed and present says whether it was
// sent; arg is the argument as decoded (nil when absent or null).
//
// An argument that is present requires the header; an absent or null one
// requires its absence. Values are compared after Base64-sentinel decoding:
// strings exactly, integers numerically (so "042" matches 42), booleans as
// "true" or "false".
func checkParamHeader(name, header string, present bool, arg any) *Error {
	key := "Mcp-Param-" + name
	if arg == nil {
		if present {
			return headerError("the " + key + " header is sent but its argument is absent")
		}
		return nil
	}
	if !present {
		return headerError("the " + key + " header is required")
	}
	v, ok := DecodeHeaderValue(header)
	if !ok {
		return headerError("the " + key + " header has an invalid Base64 value")
	}
	match := false
	switch a := arg.(type) {
	case string:
		match = v == a
	case bool:
		match = v == strconv.FormatBool(a)
	case float64:
		n, err := strconv.ParseInt(v, 10, 64)
		match = err == nil && float64(n) == a
	}
	if !match {
		return headerError("the " + key + " header does not match the argument")
	}
	return nil
}

// CheckCapabilities refuses a request that did not declare every client
// capability in need (-32021, HTTP 400). data.requiredCapabilities is a
// ClientCapabilities object naming everything needed, so a client learns
// the whole requirement from one answer.
func CheckCapabilities(meta *RequestMeta, need []string) *Error {
	missing := false
	for _, c := range need {
		if !meta.HasCapability(c) {
			missing = true
			break
		}
	}
	if !missing {
		return nil
	}
	required := make(map[string]struct{}, len(need))
	for _, c := range need {
		required[c] = struct{}{}
	}
	return NewError(CodeMissingRequiredClientCapability).WithData(map[string]any{"requiredCapabilities": required})
}

// IsToken reports whether s is an RFC 9110 token (one or more tchars): a
// header field name, or an x-mcp-header name (SEP-2243).
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
