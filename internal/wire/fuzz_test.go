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
