package wire

// The methods of the surface (docs/design.md §1). Everything else is
// -32601/404.
const (
	MethodDiscover  = "server/discover"
	MethodToolsList = "tools/list"
	MethodToolsCall = "tools/call"
	// MethodInitialize is the 2025 handshake, removed in 2026-07-28. Without
	// a modern `_meta` it marks a legacy client (answered -32022); with one
	// it is just an unknown method.
	MethodInitialize = "initialize"
)

// Request is a request whose params passed the protocol-field stage: params
// is an object (or absent) and `_meta` is a valid envelope. The members a
// method reads are kept raw: it is the method's job to say -32602 about them.
type Request struct {
	ID     ID
	Method string
	Meta   RequestMeta
	// Name is params.name as sent (tools/call, prompts/get); nil when absent.
	Name RawJSON
	// URI is params.uri as sent (resources/read); nil when absent.
	URI RawJSON
	// Arguments is params.arguments as sent (tools/call); nil when absent.
	Arguments RawJSON
	// Cursor is params.cursor as sent (tools/list); nil when absent.
	Cursor RawJSON
	// InputResponses is params.inputResponses as sent: a multi-round-trip
	// retry's answers to the input requests of the previous round (SEP-2322);
	// nil when absent.
	InputResponses RawJSON
	// RequestState is params.requestState as sent: the opaque state the
	// previous round's input_required result carried, echoed by the client
	// (SEP-2322); nil when absent.
	RequestState RawJSON
}

// NameString returns params.name when it is a JSON string.
func (r *Request) NameString() (string, bool) { return unquote(r.Name) }

// NameBytes returns params.name's bytes when it is a JSON string without
// escapes: then they are the name itself, and a caller can look the name up
// without making a string of it. It reports false otherwise, an escaped
// name included (NameString decodes that one).
func (r *Request) NameBytes() ([]byte, bool) { return plainString(r.Name) }

// CursorString returns params.cursor when it is a JSON string.
func (r *Request) CursorString() (string, bool) { return unquote(r.Cursor) }

// RequestStateString returns params.requestState when it is a JSON string.
func (r *Request) RequestStateString() (string, bool) { return unquote(r.RequestState) }

// ParseRequest reads a request's params (docs/design.md §3 stage 5,
// body side).
//
// A legacy initialize — one whose params carry no `_meta` protocol version —
// is answered -32022 naming the supported versions and the version it asked
// for (MCP 2026-07-28, basic/versioning.mdx: a legacy client has no
// fall-forward, so the answer must say what we speak). Any other request
// with missing or malformed params or `_meta` is -32602; HTTP 400 for both.
func ParseRequest(m Message) (*Request, *Error) {
	p := m.parsed
	if p == nil {
		// A Message not made by Parse: read its params the same way (a
		// params too long for fields' offsets is refused as malformed).
		p = new(parsed)
		if m.Params != nil {
			if err := scanParams(m.Params, &p.fields); err != nil {
				return nil, metaError("params is malformed")
			}
		}
	}
	f := &p.fields
	if f.params.present() && !f.paramsObject {
		if m.Method == MethodInitialize {
			return nil, (*Versions)(nil).Unsupported("")
		}
		return nil, metaError("params must be an object")
	}
	if m.Method == MethodInitialize && !(f.metaObject && f.m.ProtocolVersion.present()) {
		requested, _ := unquote(f.raw(f.legacyVersion))
		return nil, (*Versions)(nil).Unsupported(requested)
	}
	// Filled where it lives, field by field (see parseMeta): ParseInto
	// zeroed it with the rest of parsed, and so did new above.
	r := &p.req
	if err := parseMeta(f, &r.Meta); err != nil {
		return nil, err
	}
	r.ID, r.Method = m.ID, m.Method
	r.Name, r.URI = f.raw(f.name), f.raw(f.uri)
	r.Arguments, r.Cursor = f.raw(f.arguments), f.raw(f.cursor)
	r.InputResponses, r.RequestState = f.raw(f.inputResponses), f.raw(f.requestState)
	return r, nil
}
