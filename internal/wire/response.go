package wire

import (
	"strconv"

	"github.com/wymcp/wymcp/protocol"
)

// AppendErrorObject appends the error member of a JSON-RPC error answer,
// {"code":…,"message":…,"data":…}, to dst. Data that cannot be encoded is
// left out rather than failing the answer. The envelope around it (and the
// id) is the HTTP edge's to write.
func AppendErrorObject(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	if quoted, err := appendQuote(dst, e.Message); err == nil {
		dst = quoted
	} else {
		// Not UTF-8: the code's own message stands in.
		dst = append(dst, `"`+e.Code.Message()+`"`...)
	}
	if e.Data != nil {
		if data, err := Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, '}')
}

// ServerMeta returns the result _meta object that names the server; every
// result carries it (MCP 2026-07-28, basic/index.mdx: result _meta).
func ServerMeta(info protocol.Implementation) (RawJSON, error) {
	b, err := AppendImplementation([]byte(`{"`+MetaServerInfo+`":`), info)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// ProgressParams returns the JSON text of the params of a
// notifications/progress message. progress must increase from one
// notification to the next.
func ProgressParams(token RawJSON, progress float64, total *float64, message string) ([]byte, error) {
	return Marshal(struct {
		ProgressToken RawJSON  `json:"progressToken"`
		Progress      float64  `json:"progress"`
		Total         *float64 `json:"total,omitempty"`
		Message       string   `json:"message,omitempty"`
	}{token, progress, total, message})
}

// AppendCallToolResult appends a tools/call result object to dst: the
// tool's content, structuredContent and isError, plus the
// resultType and _meta every 2026-07-28 result carries (meta, the encoded
// _meta object). It writes text blocks and already-encoded structured
// content (RawJSON) by hand and encodes the rest with the JSON encoder: the
// common result costs no reflection, which was a sizeable share of a
// tools/call's CPU (bench/README.md, "Numbers behind the code's comments").
// A value that cannot be encoded is an error.
func AppendCallToolResult(dst []byte, r *protocol.CallToolResult, meta RawJSON) ([]byte, error) {
	dst, err := appendCallToolBody(dst, r, false)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"resultType":"complete","_meta":`...)
	dst = append(dst, meta...)
	return append(dst, '}'), nil
}

// AppendLegacyCallToolResult appends a tools/call result object of the
// 2025 era to dst: as AppendCallToolResult, without resultType, with _meta
// only when meta (the tool's own) is not nil, and without a
// structuredContent that is not an object (both 2025 revisions type it as
// one; the content blocks still carry it).
func AppendLegacyCallToolResult(dst []byte, r *protocol.CallToolResult, meta RawJSON) ([]byte, error) {
	dst, err := appendCallToolBody(dst, r, true)
	if err != nil {
		return nil, err
	}
	if meta != nil {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, meta...)
	}
	return append(dst, '}'), nil
}

// appendCallToolBody appends the members a tools/call result has in every
// revision, from its opening brace, and leaves it open; objectOnly leaves
// out a structuredContent that is not an object.
func appendCallToolBody(dst []byte, r *protocol.CallToolResult, objectOnly bool) ([]byte, error) {
	dst = append(dst, `{"content":[`...)
	var err error
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = AppendContent(dst, c); err != nil {
			return nil, err
		}
	}
	dst = append(dst, ']')
	if r.StructuredContent != nil {
		raw, ok := r.StructuredContent.(RawJSON)
		if !ok {
			if raw, err = Marshal(r.StructuredContent); err != nil {
				return nil, err
			}
		}
		if !objectOnly || kindOf(raw) == '{' {
			dst = append(dst, `,"structuredContent":`...)
			dst = append(dst, raw...)
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return dst, nil
}

// InputRequest is one entry of an InputRequiredResult's inputRequests: the
// server-to-client request (elicitation/create, sampling/createMessage or
// roots/list) the client must fulfil before it retries, under the key the
// retry's inputResponses answers it by (SEP-2322).
type InputRequest struct {
	Key    string
	Method string
	// Params is the request's params object, already encoded.
	Params RawJSON
}

// AppendInputRequiredResult appends a tools/call InputRequiredResult to
// dst: the input requests in their order, the sealed requestState the
// client must echo, and the _meta every result carries (SEP-2322; spec
// basic/patterns/mrtr: at least one of inputRequests and requestState, and
// wymcp always sends both). Keys and the state are quoted here; params are
// written as they are.
func AppendInputRequiredResult(dst []byte, requests []InputRequest, state string, meta RawJSON) ([]byte, error) {
	dst = append(dst, `{"resultType":"input_required","inputRequests":{`...)
	var err error
	for i, r := range requests {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendQuote(dst, r.Key); err != nil {
			return nil, err
		}
		dst = append(dst, `:{"method":`...)
		if dst, err = appendQuote(dst, r.Method); err != nil {
			return nil, err
		}
		dst = append(dst, `,"params":`...)
		dst = append(dst, r.Params...)
		dst = append(dst, '}')
	}
	dst = append(dst, `},"requestState":`...)
	if dst, err = appendQuote(dst, state); err != nil {
		return nil, err
	}
	dst = append(dst, `,"_meta":`...)
	dst = append(dst, meta...)
	return append(dst, '}'), nil
}
