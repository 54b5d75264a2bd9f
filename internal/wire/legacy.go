package wire

import (
	"net/textproto"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/protocol"
)

// The 2025 era (docs/design.md §1a): a server that serves 2025-11-25 or
// 2025-06-18 beside 2026-07-28 answers their clients on the same endpoint.
// Their requests carry no `_meta` envelope: a client opens with initialize,
// whose answer negotiates the revision, and names it afterwards in the
// MCP-Protocol-Version header alone. The server keeps no session: it issues
// no Mcp-Session-Id, and every request is read on its own.

// The methods of the 2025 era besides the three the revisions share.
const (
	// MethodPing asks the server whether it is alive.
	MethodPing = "ping"
)

// LegacyVersion reports whether m, whose headers are h, is a request of the
// 2025 era that vs serves, and the revision it speaks: a request with no
// `_meta` protocol version that is an initialize (its revision is then the
// negotiated one) or names a served 2025 revision in its
// MCP-Protocol-Version header. Every other message is the 2026-07-28
// path's to answer, as it is when vs serves no 2025 revision.
func LegacyVersion(m Message, h Header, vs *Versions) (version string, ok bool) {
	if !vs.ServesLegacy() || m.Kind != KindRequest {
		return "", false
	}
	f := m.fields()
	if f == nil || (f.metaObject && f.m.ProtocolVersion.present()) {
		return "", false
	}
	if m.Method == MethodInitialize {
		requested, _ := unquote(f.raw(f.legacyVersion))
		return vs.Negotiate(requested), true
	}
	v, err := single(h, HeaderProtocolVersion)
	if err != nil || !vs.IsLegacy(v) {
		return "", false
	}
	return v, true
}

// fields returns the params m's parse read, reading them now for a Message
// not made by Parse; nil when they are malformed.
func (m Message) fields() *fields {
	if m.parsed != nil {
		return &m.parsed.fields
	}
	p := new(parsed)
	if m.Params != nil {
		if err := scanParams(m.Params, &p.fields); err != nil {
			return nil
		}
	}
	return &p.fields
}

// LegacyCapabilities is the clientCapabilities of every 2025-era request:
// a 2025 client declares its capabilities in its initialize, which a
// stateless server does not keep, so the server takes them all as declared.
// A tool may then ask such a client for input whatever its capabilities;
// a client that cannot answer says so in its response, and the call ends
// with the tool's error (docs/design.md §1a).
var LegacyCapabilities = RawJSON(`{"elicitation":{},"roots":{},"sampling":{}}`)

// ParseLegacyRequest reads a request of the 2025 era (LegacyVersion said
// so) as a Request of revision version: the params the methods read, and
// from `_meta` the progress token and the trace context; its
// clientCapabilities are LegacyCapabilities. Params that are not an object
// are -32602.
func ParseLegacyRequest(m Message, version string) (*Request, *Error) {
	f := m.fields()
	if f == nil || (f.params.present() && !f.paramsObject) {
		return nil, metaError("params must be an object")
	}
	r := &Request{ID: m.ID, Method: m.Method}
	if m.parsed != nil {
		r = &m.parsed.req
		*r = Request{ID: m.ID, Method: m.Method}
	}
	r.Meta.ProtocolVersion = version
	r.Meta.ClientCapabilities = LegacyCapabilities
	if f.meta.present() && !f.metaObject {
		return nil, metaError("params._meta must be an object")
	}
	if f.metaObject {
		if err := parseProgressAndTrace(f, &r.Meta); err != nil {
			return nil, err
		}
	}
	r.Name, r.URI = f.raw(f.name), f.raw(f.uri)
	r.Arguments, r.Cursor = f.raw(f.arguments), f.raw(f.cursor)
	return r, nil
}

// CheckInitialize checks the params of an initialize as the 2025 schema
// requires them (InitializeRequestParams): a string protocolVersion, a
// capabilities object and a clientInfo object with a string name and
// version. Each failure is -32602.
func CheckInitialize(params RawJSON) *Error {
	var p struct {
		ProtocolVersion *string `json:"protocolVersion"`
		Capabilities    RawJSON `json:"capabilities"`
		ClientInfo      *struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		} `json:"clientInfo"`
	}
	if len(params) == 0 || Unmarshal(params, &p) != nil {
		return metaError("initialize needs params: protocolVersion, capabilities and clientInfo")
	}
	switch {
	case p.ProtocolVersion == nil:
		return metaError("params.protocolVersion must be a string")
	case kindOf(p.Capabilities) != '{':
		return metaError("params.capabilities must be an object")
	case p.ClientInfo == nil || p.ClientInfo.Name == nil || p.ClientInfo.Version == nil:
		return metaError("params.clientInfo must be an object with string name and version")
	}
	return nil
}

// AppendInitializeResult appends the result of an initialize that
// negotiated version: the revision, the server's capabilities (tools, with
// listChanged false: a stateless server has no session to tell of a change,
// even with a listen stream for 2026-07-28 clients, docs/design.md §1a), its name as that revision spells an
// Implementation, and its instructions when set.
func AppendInitializeResult(dst []byte, version string, info protocol.Implementation, instructions string) ([]byte, error) {
	var err error
	dst = append(dst, `{"protocolVersion":`...)
	if dst, err = appendQuote(dst, version); err != nil {
		return nil, err
	}
	dst = append(dst, `,"capabilities":{"tools":{"listChanged":false}},"serverInfo":`...)
	if version == Version20250618 {
		// 2025-06-18's Implementation has no description, websiteUrl or icons.
		info = protocol.Implementation{Name: info.Name, Version: info.Version, Title: info.Title}
	}
	if dst, err = AppendImplementation(dst, info); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"instructions":`, instructions); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// LegacyTool is t as tools/list shows it to a client of the 2025 revision
// version: 2025-06-18 knows no icons; neither revision knows an output
// schema whose root is not an object, which is left out (the tool's
// structuredContent still goes to the client).
func LegacyTool(t Tool, version string) Tool {
	if version == Version20250618 {
		t.Icons = nil
	}
	if len(t.OutputSchema) > 0 && !objectSchema(t.OutputSchema) {
		t.OutputSchema = nil
	}
	return t
}

// objectSchema reports whether a schema's root says "type":"object".
func objectSchema(schema RawJSON) bool {
	v, _ := strictjson.Member(schema, "type")
	s, ok := unquote(v)
	return ok && s == "object"
}

// IsPostedResponse reports whether err is ParseInto's refusal of a posted
// JSON-RPC response, which a server serving the 2025 era reads instead
// (ParseResponse): it is the client's answer to a request the server sent
// on a call's stream.
func IsPostedResponse(err *Error) bool { return err == errResponse }

// Response is a posted JSON-RPC response: the id of the request it
// answers, and its result or error member as sent (one of them nil).
type Response struct {
	ID     ID
	Result RawJSON
	Error  RawJSON
}

// ParseResponse reads a body that ParseInto refused as a posted response.
// A response with both a result and an error, or neither, or an error that
// is not an object, is -32600.
func ParseResponse(s *Scratch, body []byte) (Response, *Error) {
	s.p = parsed{}
	w := &s.p.fields
	if err := scan(&s.sc, body, w); err != nil {
		return Response{}, errParse
	}
	id, idErr := parseID(w.raw(w.id))
	if idErr != nil {
		return Response{}, idErr
	}
	r := Response{ID: id, Result: w.raw(w.result), Error: w.raw(w.error)}
	if id.IsZero() || (r.Result == nil) == (r.Error == nil) || (r.Error != nil && kindOf(r.Error) != '{') {
		return Response{}, errBadResponse
	}
	return r, nil
}

var errBadResponse = Errorf(CodeInvalidRequest, "Invalid Request: a response has an id and exactly one of result and error (an object)")

// CheckLegacyHeaders applies the 2026-07-28 mirror headers to a 2025-era
// request when it carries them: a 2025 client sends none, but a gateway in
// front may route or authorize on Mcp-Method, Mcp-Name and Mcp-Param-*, so
// one that disagrees with the body is refused (-32020) in both eras, and
// the body is never served under another request's name. An absent header
// is not required.
func CheckLegacyHeaders(h Header, r *Request, params []HeaderParam) *Error {
	if err := checkMethodName(h, r, false); err != nil {
		return err
	}
	var present []HeaderParam
	for _, p := range params {
		if _, ok := h[textproto.CanonicalMIMEHeaderKey(HeaderParamPrefix+p.Name)]; ok {
			present = append(present, p)
		}
	}
	return CheckParamHeaders(h, present, r.Arguments)
}
