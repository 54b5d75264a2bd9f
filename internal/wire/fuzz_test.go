package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/wire"
)

// FuzzParse: every body gets a classification or a specified error, never a
// panic; a parsed message's id is one we can echo as valid JSON; an answer
// built for any outcome is valid JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}",
		`{"jsonrpc":"2.0","id":"\ud800","method":"m"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		``, `{`, `null`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, id, perr := wire.Parse(body)
		// No parser differential: the one-pass scan calls a body a parse
		// error exactly when a strict whole-value check does.
		if strict := jsontext.Value(body).IsValid(); strict == (perr != nil && perr.Code == wire.CodeParseError) {
			t.Fatalf("strict validity %v, but Parse answered %v", strict, perr)
		}
		var out []byte
		if perr != nil {
			switch perr.Code {
			case wire.CodeParseError, wire.CodeInvalidRequest:
			default:
				t.Fatalf("unexpected code %d", perr.Code)
			}
			out = framed(id, wire.AppendErrorObject(nil, perr))
		} else {
			if msg.Kind != wire.KindRequest && msg.Kind != wire.KindNotification {
				t.Fatalf("kind %d", msg.Kind)
			}
			if (msg.Kind == wire.KindNotification) != msg.ID.IsZero() {
				t.Fatalf("kind %d with id %q", msg.Kind, msg.ID.JSON())
			}
			if msg.Kind == wire.KindRequest {
				if req, perr := wire.ParseRequest(msg); perr == nil {
					_ = wire.CheckHeaders(wire.Header{}, req)
					req.Meta.HasCapability("sampling")
				} else {
					out = framed(msg.ID, wire.AppendErrorObject(nil, perr))
				}
			}
			if out == nil {
				out = framed(msg.ID, []byte(`{}`))
			}
		}
		if !json.Valid(out) {
			t.Fatalf("answer is not valid JSON: %s", out)
		}
	})
}

// framed puts an answer's member beside its id, as the HTTP edge does, so
// that both are checked as JSON.
func framed(id wire.ID, member []byte) []byte {
	return append(append([]byte(`{"id":`+id.JSON()+`,"answer":`), member...), '}')
}

// FuzzDecodeHeaderValue: the sentinel decoder never panics, and what it
// accepts is valid UTF-8 text.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"echo", "=?base64?ZWNobw==?=", "=?base64??=", "=?base64?=", "=?base64?/w==?=", "=?base64?ZW*o?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := wire.DecodeHeaderValue(v)
		if ok && got != v {
			b, _ := json.Marshal(got)
			if !json.Valid(b) {
				t.Fatalf("decoded value is not text: %q", got)
			}
		}
	})
}

// FuzzLegacy: what a 2025-era client sends — a request without a `_meta`
// envelope, an initialize, a posted answer to the server's request — gets a
// classification or a specified error, never a panic, on a server serving
// every era; a posted answer read has an id and exactly one of result and
// error.
func FuzzLegacy(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"wymcp-1-x","result":{"action":"accept","content":{"name":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":"wymcp-1-x","error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":"wymcp-1-x","error":7}`,
		`{"jsonrpc":"2.0","id":"wymcp-1-x","result":{},"error":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":[]}`,
	} {
		f.Add([]byte(s), "2025-11-25")
		f.Add([]byte(s), "")
	}
	vs, err := wire.NewVersions([]string{wire.Version, wire.Version20251125, wire.Version20250618})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		h := map[string][]string{}
		if version != "" {
			h[wire.HeaderProtocolVersion] = []string{version}
		}
		var s wire.Scratch
		msg, _, perr := wire.ParseInto(&s, body)
		if wire.IsPostedResponse(perr) {
			r, rerr := wire.ParseResponse(&s, body)
			if rerr == nil && (r.ID.IsZero() || (r.Result == nil) == (r.Error == nil)) {
				t.Fatalf("answer read as %+v", r)
			}
			return
		}
		if perr != nil {
			return
		}
		v, ok := wire.LegacyVersion(msg, h, vs)
		if !ok {
			return
		}
		if !vs.IsLegacy(v) {
			t.Fatalf("LegacyVersion gave %q, not a 2025 revision served", v)
		}
		req, rerr := wire.ParseLegacyRequest(msg, v)
		if rerr == nil && (req.Meta.ProtocolVersion != v || req.Method != msg.Method) {
			t.Fatalf("request %+v for %q", req, v)
		}
		if msg.Method == wire.MethodInitialize {
			_ = wire.CheckInitialize(msg.Params)
		}
	})
}
