package wire

import (
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/protocol"
)

// The reserved `_meta` keys of a 2026-07-28 request (MCP 2026-07-28, basic/index.mdx: _meta).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// RequestMeta is a validated request `_meta` envelope.
type RequestMeta struct {
	// ProtocolVersion is the revision the client speaks on this request.
	ProtocolVersion string
	// ClientCapabilities is the capabilities object as sent (always an
	// object). The server must not infer capabilities from other requests.
	ClientCapabilities RawJSON
	// ClientInfo is the clientInfo object as sent, nil when omitted. It is
	// checked (an object with string name and version) but not decoded: no
	// answer depends on it, so decoding it would cost every request two
	// strings for nothing. ClientImplementation decodes it.
	ClientInfo RawJSON
	// LogLevel is the requested logging level, "" when absent. Without it the
	// server sends no notifications/message (SEP-2577).
	LogLevel string
	// ProgressToken is the progress token as sent (string or number); nil
	// when the client did not opt in to notifications/progress.
	ProgressToken RawJSON
	// Traceparent, Tracestate and Baggage carry W3C trace context (SEP-414).
	Traceparent, Tracestate, Baggage string
}

// HasCapability reports whether the client declared the top-level
// capability name (e.g. "sampling") as an object in this request's
// clientCapabilities. It walks the object rather than decoding it into a
// map: the up-front check of a tool's required capabilities and the check
// of what a multi-round-trip call asks for run it per request, and the map
// allocated every time.
func (m *RequestMeta) HasCapability(name string) bool {
	v, _ := strictjson.Member(m.ClientCapabilities, name)
	return kindOf(v) == '{'
}

// logLevels are the LoggingLevel values of the schema (RFC 5424 names),
// each mapped to itself: looking a level up yields the map's own string, so
// a valid level is kept without allocating one (see logLevel).
var logLevels = map[string]string{
	"debug": "debug", "info": "info", "notice": "notice", "warning": "warning",
	"error": "error", "critical": "critical", "alert": "alert", "emergency": "emergency",
}

// ClientImplementation decodes the client's clientInfo: the zero value when
// it was omitted.
func (m *RequestMeta) ClientImplementation() protocol.Implementation {
	var impl protocol.Implementation
	if m.ClientInfo != nil {
		_ = Unmarshal(m.ClientInfo, &impl) // checked by parseMeta
	}
	return impl
}

// parseMeta validates the `_meta` envelope the scan found into m, which
// must be zero (docs/design.md §5: -32602, HTTP 400 on every failure). A
// present-but-malformed optional key is as invalid as a missing required
// one: clients that send it mean something by it.
//
// It fills m in place rather than returning a RequestMeta, and
// ParseRequest fills its Request in place too: returned or built as values,
// both were copied on every return path, code every request ran through
// (bench/footprint.sh; bench/README.md has the measurement).
func parseMeta(f *fields, m *RequestMeta) *Error {
	if !f.metaObject {
		return errNoMeta
	}
	w := &f.m
	var ok bool
	if !w.ProtocolVersion.present() {
		return errNoMetaVersion
	}
	if m.ProtocolVersion, ok = protocolVersion(f.raw(w.ProtocolVersion)); !ok {
		return metaError(MetaProtocolVersion + " must be a string")
	}
	if !w.ClientCapabilities.present() {
		return metaError("params._meta is missing " + MetaClientCapabilities)
	}
	m.ClientCapabilities = f.raw(w.ClientCapabilities)
	if kindOf(m.ClientCapabilities) != '{' {
		return metaError(MetaClientCapabilities + " must be an object")
	}
	if w.ClientInfo.present() {
		if !f.clientInfoObject {
			return metaError(MetaClientInfo + " must be an object with name and version")
		}
		// The lexer has checked the strings themselves; here only their kind.
		if kindOf(f.raw(f.clientInfo.Name)) != '"' || kindOf(f.raw(f.clientInfo.Version)) != '"' {
			return metaError(MetaClientInfo + " must have string name and version")
		}
		m.ClientInfo = f.raw(w.ClientInfo)
	}
	if w.LogLevel.present() {
		if m.LogLevel, ok = logLevel(f.raw(w.LogLevel)); !ok {
			return metaError(MetaLogLevel + " must be a logging level")
		}
	}
	return parseProgressAndTrace(f, m)
}

// parseProgressAndTrace reads the `_meta` members both eras share: the
// progress token and the W3C trace context.
func parseProgressAndTrace(f *fields, m *RequestMeta) *Error {
	w := &f.m
	var ok bool
	if w.ProgressToken.present() {
		m.ProgressToken = f.raw(w.ProgressToken)
		if k := kindOf(m.ProgressToken); k != '"' && k != '0' {
			return metaError("progressToken must be a string or a number")
		}
	}
	if m.Traceparent, ok = optionalString(f.raw(w.Traceparent)); !ok {
		return metaError("traceparent must be a string")
	}
	if m.Tracestate, ok = optionalString(f.raw(w.Tracestate)); !ok {
		return metaError("tracestate must be a string")
	}
	if m.Baggage, ok = optionalString(f.raw(w.Baggage)); !ok {
		return metaError("baggage must be a string")
	}
	return nil
}

// protocolVersion unquotes the protocol version of a `_meta`. A known
// revision, the version nearly every request names, comes back as the
// string of known (2026-07-28 first): comparing the bytes with a string allocates
// nothing, where unquote copies them into a new string per request unless
// its own short list of constants names them. Any other string (escaped,
// or a revision we do not serve) is unquoted.
func protocolVersion(v RawJSON) (string, bool) {
	if inner, ok := plainString(v); ok {
		for _, k := range known {
			if string(inner) == k {
				return k, true
			}
		}
	}
	return unquote(v)
}

// logLevel returns the logging level v names, as logLevels' own string, and
// false when v is not a string naming one. A level sent without escapes is
// looked up by its bytes, which allocates nothing.
func logLevel(v RawJSON) (string, bool) {
	if inner, ok := plainString(v); ok {
		level, ok := logLevels[string(inner)]
		return level, ok
	}
	s, ok := unquote(v)
	if !ok {
		return "", false
	}
	level, ok := logLevels[s]
	return level, ok
}

// optionalString unquotes an optional string member: "" and true when absent.
func optionalString(v RawJSON) (string, bool) {
	if v == nil {
		return "", true
	}
	return unquote(v)
}

// The two refusals of a request whose params name no protocol version: the
// shape of every 2025-era request but initialize (LegacyRequest).
var (
	errNoMeta        = metaError("params._meta is required and must be an object")
	errNoMetaVersion = metaError("params._meta is missing " + MetaProtocolVersion)
)

// LegacyRequest is the answer to a request that ParseRequest refused with
// err, given its headers h. A 2025-era client sends its requests without a
// `_meta` protocol version, and names its revision in the
// MCP-Protocol-Version header once it has initialized: when that header
// names a revision the server does not serve, the client is told so with
// -32022 naming the supported ones (as a legacy initialize is), rather
// than -32602 about a `_meta` it never knew to send. When the server serves
// the 2025 era, a request with neither is such a client's too (the 2025
// transport has a server assume 2025-03-26, which is not served): -32022,
// naming no revision. Any other refusal is err.
func LegacyRequest(err *Error, h Header, vs *Versions) *Error {
	if err != errNoMeta && err != errNoMetaVersion {
		return err
	}
	v, herr := single(h, HeaderProtocolVersion)
	switch {
	case herr != nil || v == Version:
		return err
	case v == "" && !vs.ServesLegacy():
		return err
	}
	return vs.Unsupported(v)
}

func metaError(msg string) *Error {
	return Errorf(CodeInvalidParams, "Invalid params: "+msg)
}
