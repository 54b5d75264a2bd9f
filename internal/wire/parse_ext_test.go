package wire_test

import (
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/wire"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		code       wire.Code // 0: parsed
		kind       wire.Kind
		id         string // ID.JSON()
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, wire.KindRequest, "1"},
		{"string id", `{"jsonrpc":"2.0","id":"a\u00e9","method":"m"}`, 0, wire.KindRequest, `"a\u00e9"`},
		{"negative id", `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}`, 0, wire.KindRequest, "-9223372036854775808"},
		{"max id", `{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`, 0, wire.KindRequest, "9223372036854775807"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/x","params":5}`, 0, wire.KindNotification, "null"},
		{"white space", " \n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n", 0, wire.KindRequest, "1"},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"m","extra":[1,2]}`, 0, wire.KindRequest, "1"},
		{"upper-case member is not method", `{"jsonrpc":"2.0","id":1,"METHOD":"m"}`, wire.CodeInvalidRequest, 0, "1"},
		{"empty", ``, wire.CodeParseError, 0, "null"},
		{"spaces", `   `, wire.CodeParseError, 0, "null"},
		{"garbage", `nope`, wire.CodeParseError, 0, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":1`, wire.CodeParseError, 0, "null"},
		{"truncated array", `[{"jsonrpc":"2.0"`, wire.CodeParseError, 0, "null"},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, wire.CodeParseError, 0, "null"},
		{"duplicate nested", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":1,"b":2}}}`, wire.CodeParseError, 0, "null"},
		{"escaped duplicate", `{"jsonrpc":"2.0","id":1,"method":"m","\u006dethod":"n"}`, wire.CodeParseError, 0, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\x28\"}", wire.CodeParseError, 0, "null"},
		{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"\udc00"}`, wire.CodeParseError, 0, "null"},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"m","params":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`, wire.CodeParseError, 0, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, wire.CodeInvalidRequest, 0, "null"},
		{"empty batch", `[]`, wire.CodeInvalidRequest, 0, "null"},
		{"number", `42`, wire.CodeInvalidRequest, 0, "null"},
		{"null", `null`, wire.CodeInvalidRequest, 0, "null"},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, wire.CodeInvalidRequest, 0, "1"},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, wire.CodeInvalidRequest, 0, "1"},
		{"no jsonrpc", `{"id":1,"method":"m"}`, wire.CodeInvalidRequest, 0, "1"},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"m"}`, wire.CodeInvalidRequest, 0, "1"},
		{"method number", `{"jsonrpc":"2.0","id":1,"method":5}`, wire.CodeInvalidRequest, 0, "1"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
		{"id float", `{"jsonrpc":"2.0","id":1.0,"method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
		{"id exponent", `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
		{"id too big", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
		{"id too long", `{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 2000) + `","method":"m"}`, wire.CodeInvalidRequest, 0, "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			msg, id, err := wire.Parse([]byte(tc.body))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if msg.Kind != tc.kind || msg.ID.JSON() != tc.id || id.JSON() != tc.id {
					t.Errorf("kind %d id %s, want %d %s", msg.Kind, msg.ID.JSON(), tc.kind, tc.id)
				}
				return
			}
			if err == nil || err.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			if id.JSON() != tc.id {
				t.Errorf("id = %s, want %s", id.JSON(), tc.id)
			}
		})
	}
}

func TestIDString(t *testing.T) {
	t.Parallel()
	msg, _, err := wire.Parse([]byte(`{"jsonrpc":"2.0","id":"a\"b","method":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg.ID.String() != `a"b` || msg.ID.JSON() != `"a\"b"` {
		t.Errorf("String %q JSON %q", msg.ID.String(), msg.ID.JSON())
	}
}

func TestDecodeHeaderValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"echo", "echo", true},
		{"=?base64?ZWNobw==?=", "echo", true},
		{"=?base64?5pel5pys?=", "日本", true},
		{"=?base64??=", "", true},
		{"=?BASE64?ZWNobw==?=", "=?BASE64?ZWNobw==?=", true}, // not the exact sentinel: literal
		{"=?base64?ZWNobw==", "=?base64?ZWNobw==", true},     // no suffix: literal
		{"ZWNobw==?=", "ZWNobw==?=", true},                   // no prefix: literal
		{"=?base64?ZWNobw?=", "", false},                     // bad padding
		{"=?base64?ZW*obw==?=", "", false},                   // bad alphabet
		{"=?base64?ZWNobw-_?=", "", false},                   // URL alphabet is not standard
		{"=?base64?/w==?=", "", false},                       // decodes to invalid UTF-8
	}
	for _, tc := range cases {
		got, ok := wire.DecodeHeaderValue(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func request(t *testing.T, body string) *wire.Request {
	t.Helper()
	msg, _, perr := wire.Parse([]byte(body))
	if perr != nil {
		t.Fatal(perr)
	}
	req, perr := wire.ParseRequest(msg)
	if perr != nil {
		t.Fatal(perr)
	}
	return req
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`

func TestParseRequestMeta(t *testing.T) {
	t.Parallel()
	req := request(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"debug","progressToken":"p1",`+
		`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"a=b"}}}`)
	m := req.Meta
	if m.ProtocolVersion != "2026-07-28" || m.ClientImplementation().Name != "c" || m.LogLevel != "debug" ||
		string(m.ProgressToken) != `"p1"` || m.Tracestate != "a=b" || !strings.HasPrefix(m.Traceparent, "00-") {
		t.Errorf("meta = %+v", m)
	}
	if !m.HasCapability("sampling") || m.HasCapability("elicitation") {
		t.Errorf("capabilities wrong")
	}
	if name, ok := req.NameString(); !ok || name != "x" || string(req.Arguments) != `{"a":1}` {
		t.Errorf("name %q arguments %s", name, req.Arguments)
	}
}

func TestParseRequestRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, params string
		code         wire.Code
	}{
		{"progressToken bool", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":true}}`, wire.CodeInvalidParams},
		{"capabilities array", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, wire.CodeInvalidParams},
		{"version number", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}`, wire.CodeInvalidParams},
		{"traceparent number", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":1}}`, wire.CodeInvalidParams},
		{"params null", `null`, wire.CodeInvalidParams},
	}
	for _, tc := range cases {
		msg, _, perr := wire.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + tc.params + `}`))
		if perr != nil {
			t.Fatal(perr)
		}
		if _, perr := wire.ParseRequest(msg); perr == nil || perr.Code != tc.code {
			t.Errorf("%s: err %v, want %d", tc.name, perr, tc.code)
		}
	}
}

// TestCheckHeadersOrder: with several headers wrong, the first rule in
// docs/design.md §5's order answers; a version mismatch is -32020 even
// when the body's version is also unsupported.
func TestCheckHeadersOrder(t *testing.T) {
	t.Parallel()
	req := request(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",`+meta+`}}`)
	h := wire.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}
	if err := wire.CheckHeaders(h, req); err != nil {
		t.Fatalf("good headers: %v", err)
	}
	bad := wire.Header{"Mcp-Protocol-Version": {"1999-01-01"}, "Mcp-Method": {"tools/list"}}
	err := wire.CheckHeaders(bad, req)
	if err == nil || err.Code != wire.CodeHeaderMismatch || !strings.Contains(err.Message, "MCP-Protocol-Version") {
		t.Errorf("err = %v", err)
	}
	v999 := request(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if err = wire.CheckHeaders(wire.Header{"Mcp-Protocol-Version": {"v999"}, "Mcp-Method": {"tools/list"}}, v999); err != nil {
		t.Errorf("headers agree: err = %v", err)
	}
	if err = wire.CheckVersion(v999, nil); err == nil || err.Code != wire.CodeUnsupportedProtocolVersion {
		t.Errorf("unsupported: err = %v", err)
	}
}

// TestAppendErrorObject: the error member with its data; a message is
// escaped as the JSON encoder escapes it, and one that is not UTF-8 gives
// way to its code's own message.
func TestAppendErrorObject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  *wire.Error
		want string
	}{
		{(*wire.Versions)(nil).Unsupported("x"), `{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"x"}}`},
		{wire.Errorf(wire.CodeInvalidParams, "Unknown tool: \"a\\b\"\n<é>"), `{"code":-32602,"message":"Unknown tool: \"a\\b\"\n<é>"}`},
		{wire.Errorf(wire.CodeInvalidParams, "Unknown tool: \xff"), `{"code":-32602,"message":"Invalid params"}`},
	} {
		if got := string(wire.AppendErrorObject(nil, c.err)); got != c.want {
			t.Errorf("\n got %s\nwant %s", got, c.want)
		}
	}
}

// TestParseRequestRetry: a multi-round-trip retry's inputResponses and
// requestState are read in the same pass as the other params members, kept
// as they were sent (their shape is the method's to judge), and absent on
// an ordinary request.
func TestParseRequestRetry(t *testing.T) {
	t.Parallel()
	req := request(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},`+
		`"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},"requestState":"AbC-_1",`+meta+`}}`)
	if got := string(req.InputResponses); got != `{"user_name":{"action":"accept","content":{"name":"Alice"}}}` {
		t.Errorf("InputResponses = %s", got)
	}
	if got, ok := req.RequestStateString(); !ok || got != "AbC-_1" {
		t.Errorf("RequestState = %q, %v", got, ok)
	}
	for _, params := range []string{`"inputResponses":null,"requestState":7`, `"inputResponses":[1],"requestState":{"a":1}`} {
		req := request(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x",`+params+`,`+meta+`}}`)
		if req.InputResponses == nil || req.RequestState == nil {
			t.Errorf("%s: a present member of any shape must be kept", params)
		}
		if _, ok := req.RequestStateString(); ok {
			t.Errorf("%s: requestState is not a string", params)
		}
	}
	plain := request(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x",`+meta+`}}`)
	if plain.InputResponses != nil || plain.RequestState != nil {
		t.Errorf("absent members read as %q %q", plain.InputResponses, plain.RequestState)
	}
	// An escaped name means the same member.
	esc := request(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","request\u0053tate":"s",`+meta+`}}`)
	if got, _ := esc.RequestStateString(); got != "s" {
		t.Errorf("escaped name: %q", got)
	}
}

// TestIDLength: a string id may be 1022 bytes between its quotes (1024 of
// JSON text); a longer one is refused with a message of its own, not as an
// id of the wrong type (docs/design.md §5).
func TestIDLength(t *testing.T) {
	t.Parallel()
	body := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", n) + `","method":"m"}`)
	}
	if msg, _, err := wire.Parse(body(1022)); err != nil || len(msg.ID.String()) != 1022 {
		t.Fatalf("a 1022-byte id: err %v", err)
	}
	_, id, err := wire.Parse(body(1023))
	if err == nil || err.Code != wire.CodeInvalidRequest || !id.IsZero() {
		t.Fatalf("a 1023-byte id: err %v, id %s", err, id.JSON())
	}
	if want := "Invalid Request: id too long (its JSON text may be at most 1024 bytes)"; err.Message != want {
		t.Errorf("message %q, want %q", err.Message, want)
	}
	if _, _, err := wire.Parse([]byte(`{"jsonrpc":"2.0","id":true,"method":"m"}`)); err == nil || err.Message != "Invalid Request: id must be a string or an integer" {
		t.Errorf("a bool id: %v", err)
	}
}
