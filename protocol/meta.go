package protocol

// The reserved `_meta` keys of a 2026-07-28 request (spec digest §1.1).
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
	// ClientInfo is the client's Implementation; the zero value when omitted.
	ClientInfo Implementation
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
// capability name (e.g. "sampling") in this request's clientCapabilities.
func (m *RequestMeta) HasCapability(name string) bool {
	var caps map[string]RawJSON
	if err := decodeStrict(m.ClientCapabilities, &caps); err != nil {
		return false
	}
	v, ok := caps[name]
	return ok && kindOf(v) == '{'
}

// logLevels are the LoggingLevel values of the schema (RFC 5424 names).
var logLevels = map[string]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

// parseMeta validates the `_meta` envelope the scan found (DESIGN §5:
// -32602, HTTP 400 on every failure). A present-but-malformed optional key
// is as invalid as a missing required one: clients that send it mean
// something by it.
func parseMeta(f *fields) (RequestMeta, *Error) {
	if !f.metaObject {
		return RequestMeta{}, metaError("params._meta is required and must be an object")
	}
	w := &f.m
	var m RequestMeta
	var ok bool
	if w.ProtocolVersion == nil {
		return m, metaError("params._meta is missing " + MetaProtocolVersion)
	}
	if m.ProtocolVersion, ok = unquote(w.ProtocolVersion); !ok {
		return m, metaError(MetaProtocolVersion + " must be a string")
	}
	if w.ClientCapabilities == nil {
		return m, metaError("params._meta is missing " + MetaClientCapabilities)
	}
	if kindOf(w.ClientCapabilities) != '{' {
		return m, metaError(MetaClientCapabilities + " must be an object")
	}
	m.ClientCapabilities = w.ClientCapabilities
	if w.ClientInfo != nil {
		if !f.clientInfoObject {
			return m, metaError(MetaClientInfo + " must be an object with name and version")
		}
		name, ok1 := unquote(f.clientInfo.Name)
		version, ok2 := unquote(f.clientInfo.Version)
		if !ok1 || !ok2 {
			return m, metaError(MetaClientInfo + " must have string name and version")
		}
		m.ClientInfo = Implementation{Name: name, Version: version}
	}
	if w.LogLevel != nil {
		if m.LogLevel, ok = unquote(w.LogLevel); !ok || !logLevels[m.LogLevel] {
			return m, metaError(MetaLogLevel + " must be a logging level")
		}
	}
	if w.ProgressToken != nil {
		if k := kindOf(w.ProgressToken); k != '"' && k != '0' {
			return m, metaError("progressToken must be a string or a number")
		}
		m.ProgressToken = w.ProgressToken
	}
	if m.Traceparent, ok = optionalString(w.Traceparent); !ok {
		return m, metaError("traceparent must be a string")
	}
	if m.Tracestate, ok = optionalString(w.Tracestate); !ok {
		return m, metaError("tracestate must be a string")
	}
	if m.Baggage, ok = optionalString(w.Baggage); !ok {
		return m, metaError("baggage must be a string")
	}
	return m, nil
}

// optionalString unquotes an optional string member: "" and true when absent.
func optionalString(v RawJSON) (string, bool) {
	if v == nil {
		return "", true
	}
	return unquote(v)
}

func metaError(msg string) *Error {
	return Errorf(CodeInvalidParams, "Invalid params: "+msg)
}
