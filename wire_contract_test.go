package wymcp_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestRejections is docs/design.md §5's table, one case per row (and per
// shape a row names): each asserts the HTTP status, the JSON-RPC code,
// the echoed id and, where the row names them, headers and data.
func TestRejections(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, &wymcp.Options{MaxBodyBytes: 1 << 10}, nil)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + mcptest.Meta + `,"pad":"` + strings.Repeat("x", 2<<10) + `"}}`

	cases := []struct {
		name   string
		row    string
		req    mcptest.RPC
		status int
		code   int
		id     string
		check  func(t *testing.T, rep mcptest.Reply)
	}{
		// Stage 1: the wire.
		{name: "GET", row: "GET, DELETE, any verb but POST", req: mcptest.RPC{Verb: "GET"}, status: 405, code: -32600, id: "null",
			check: func(t *testing.T, rep mcptest.Reply) { wantHeader(t, rep, "Allow", "POST") }},
		{name: "DELETE", row: "GET, DELETE, any verb but POST", req: mcptest.RPC{Verb: "DELETE"}, status: 405, code: -32600, id: "null",
			check: func(t *testing.T, rep mcptest.Reply) { wantHeader(t, rep, "Allow", "POST") }},
		{name: "PUT", row: "GET, DELETE, any verb but POST", req: withVerb(mcptest.Call("tools/list", ""), "PUT"), status: 405, code: -32600, id: "null"},
		{name: "foreign Origin", row: "Origin present and not allowed", req: mcptest.Call("tools/list", "").With("Origin", "https://evil.example.com"), status: 403, code: -32600, id: "null"},
		{name: "null Origin", row: "Origin present and not allowed", req: mcptest.Call("tools/list", "").With("Origin", "null"), status: 403, code: -32600, id: "null"},
		{name: "two Origins", row: "Origin repeated", req: mcptest.Call("tools/list", "").With("Origin", "http://localhost").WithExtra("Origin", "https://evil.example.com"), status: 403, code: -32600, id: "null",
			check: func(t *testing.T, rep mcptest.Reply) { wantMessage(t, rep, "Forbidden: more than one Origin header") }},
		{name: "two allowed Origins", row: "Origin repeated", req: mcptest.Call("tools/list", "").With("Origin", "http://localhost").WithExtra("Origin", "http://127.0.0.1"), status: 403, code: -32600, id: "null"},
		{name: "foreign Host on loopback", row: "Host not allowed (DNS rebinding)", req: mcptest.Call("tools/list", "").With("Host", "evil.example.com"), status: 403, code: -32600, id: "null"},
		{name: "text/plain", row: "Content-Type not application/json", req: mcptest.Call("tools/list", "").With("Content-Type", "text/plain"), status: 415, code: -32600, id: "null"},
		{name: "no Content-Type", row: "Content-Type not application/json", req: mcptest.Call("tools/list", "").With("Content-Type", ""), status: 415, code: -32600, id: "null"},
		{name: "Accept text/html", row: "Accept present and admits neither", req: mcptest.Call("tools/list", "").With("Accept", "text/html"), status: 406, code: -32600, id: "null"},
		{name: "body over the limit", row: "body over the limit", req: mcptest.RPC{Body: big, Headers: map[string]string{"Mcp-Method": "tools/list"}}, status: 413, code: -32600, id: "null"},

		// Stage 2: parse and classify.
		{name: "empty body", row: "empty body", req: mcptest.RPC{Body: ""}, status: 400, code: -32700, id: "null"},
		{name: "invalid JSON", row: "invalid JSON", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,`}, status: 400, code: -32700, id: "null"},
		{name: "trailing data", row: "invalid JSON", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"} {}`}, status: 400, code: -32700, id: "null"},
		{name: "duplicate method", row: "duplicate names", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"_meta":` + mcptest.Meta + `}}`}, status: 400, code: -32700, id: "null"},
		{name: "duplicate _meta key", row: "duplicate names", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`}, status: 400, code: -32700, id: "null"},
		{name: "invalid UTF-8", row: "invalid UTF-8", req: mcptest.RPC{Body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\xff\"}"}, status: 400, code: -32700, id: "null"},
		{name: "lone surrogate", row: "invalid UTF-8", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\ud800"}}`}, status: 400, code: -32700, id: "null"},
		{name: "batch", row: "batch (array)", req: mcptest.RPC{Body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`}, status: 400, code: -32600, id: "null"},
		{name: "posted response", row: "a posted response", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":7,"result":{}}`}, status: 400, code: -32600, id: "7"},
		{name: "jsonrpc 1.0", row: "not a JSON-RPC 2.0 object", req: mcptest.RPC{Body: `{"jsonrpc":"1.0","id":"a","method":"tools/list"}`}, status: 400, code: -32600, id: `"a"`},
		{name: "no method", row: "not a JSON-RPC 2.0 object", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":3}`}, status: 400, code: -32600, id: "3"},
		{name: "a string", row: "not a JSON-RPC 2.0 object", req: mcptest.RPC{Body: `"tools/list"`}, status: 400, code: -32600, id: "null"},
		{name: "id null", row: "bad id type", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`}, status: 400, code: -32600, id: "null"},
		{name: "id float", row: "bad id type", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`}, status: 400, code: -32600, id: "null"},
		{name: "id bool", row: "bad id type", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":true,"method":"tools/list"}`}, status: 400, code: -32600, id: "null"},
		{name: "id object", row: "bad id type", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`}, status: 400, code: -32600, id: "null"},
		{name: "id past int64", row: "bad id type", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}`}, status: 400, code: -32600, id: "null"},

		// Stage 5: the protocol fields.
		{name: "legacy initialize", row: "initialize without a modern _meta", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, Headers: map[string]string{"MCP-Protocol-Version": ""}},
			status: 400, code: -32022, id: "0", check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"supported": []any{"2026-07-28"}, "requested": "2025-11-25"})
			}},
		{name: "legacy initialize without version", row: "initialize without a modern _meta", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize"}`},
			status: 400, code: -32022, id: "0", check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"supported": []any{"2026-07-28"}, "requested": ""})
			}},
		{name: "2025-era request after initialize", row: "a request without a _meta version whose MCP-Protocol-Version names an unserved revision", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, Headers: map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2025-06-18"}},
			status: 400, code: -32022, id: "2", check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"supported": []any{"2026-07-28"}, "requested": "2025-06-18"})
			}},
		{name: "2025-era call with a progress token", row: "a request without a _meta version whose MCP-Protocol-Version names an unserved revision", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}}`, Headers: map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo", "MCP-Protocol-Version": "2025-11-25"}},
			status: 400, code: -32022, id: "3", check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"supported": []any{"2026-07-28"}, "requested": "2025-11-25"})
			}},
		{name: "no _meta, served revision in the header", row: "params._meta missing", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Headers: map[string]string{"Mcp-Method": "tools/list"}}, status: 400, code: -32602, id: "1"},
		{name: "no params", row: "params._meta missing", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "no _meta", row: "params._meta missing", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "_meta not an object", row: "params._meta malformed", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":[]}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "params not an object", row: "params._meta malformed", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":[1]}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "no protocolVersion", row: "missing protocolVersion", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "no clientCapabilities", row: "missing clientCapabilities", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "bad logLevel", row: "bad logLevel", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "clientInfo without version", row: "params._meta malformed", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x"}}}}`, Headers: map[string]string{"Mcp-Method": "server/discover"}}, status: 400, code: -32602, id: "1"},
		{name: "no MCP-Protocol-Version", row: "MCP-Protocol-Version missing", req: mcptest.Call("tools/list", "").With("MCP-Protocol-Version", ""), status: 400, code: -32020, id: "1"},
		{name: "header and _meta versions differ", row: "MCP-Protocol-Version ≠ _meta version (mismatch beats unsupported)", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, Headers: map[string]string{"Mcp-Method": "tools/list"}}, status: 400, code: -32020, id: "1"},
		{name: "MCP-Protocol-Version twice", row: "MCP-Protocol-Version malformed", req: mcptest.Call("tools/list", "").WithExtra("MCP-Protocol-Version", "2026-07-28"), status: 400, code: -32020, id: "1"},
		{name: "no Mcp-Method", row: "Mcp-Method missing", req: mcptest.Call("tools/list", "").With("Mcp-Method", ""), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Method differs", row: "Mcp-Method ≠ method", req: mcptest.Call("tools/list", "").With("Mcp-Method", "tools/call"), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Method case differs", row: "Mcp-Method values are case-sensitive", req: mcptest.Call("tools/list", "").With("Mcp-Method", "TOOLS/LIST"), status: 400, code: -32020, id: "1"},
		{name: "no Mcp-Name", row: "Mcp-Name missing", req: mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", ""), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Name differs", row: "Mcp-Name ≠ params.name", req: mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", "add"), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Name bad Base64", row: "bad Base64 rejects", req: mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", "=?base64?ZWNo!!?="), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Name Base64 without padding", row: "bad Base64 rejects", req: mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", "=?base64?ZWNobw?="), status: 400, code: -32020, id: "1"},
		{name: "Mcp-Name twice", row: "Mcp-Name malformed", req: mcptest.ToolCall("echo", `{"text":"hi"}`).WithExtra("Mcp-Name", "echo"), status: 400, code: -32020, id: "1"},
		{name: "unsupported version", row: "version (header = _meta) not supported", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":"v","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, Headers: map[string]string{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "v999.0.0"}},
			status: 400, code: -32022, id: `"v"`, check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"supported": []any{"2026-07-28"}, "requested": "v999.0.0"})
			}},
		{name: "capability not declared", row: "tool requires a client capability the request did not declare", req: mcptest.ToolCall("needs_sampling", `{}`),
			status: 400, code: -32021, id: "1", check: func(t *testing.T, rep mcptest.Reply) {
				wantData(t, rep, map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
			}},

		// Stage 6: the method table.
		{name: "unknown method", row: "unknown method", req: mcptest.Call("unknown/method", ""), status: 404, code: -32601, id: "1"},
		{name: "modern initialize", row: "unknown method (initialize with a modern _meta)", req: mcptest.Call("initialize", ""), status: 404, code: -32601, id: "1"},
		{name: "ping", row: "unknown method (removed in 2026-07-28)", req: mcptest.Call("ping", ""), status: 404, code: -32601, id: "1"},
		{name: "logging/setLevel", row: "unknown method (removed in 2026-07-28)", req: mcptest.Call("logging/setLevel", `"level":"info"`), status: 404, code: -32601, id: "1"},
		{name: "resources/list", row: "unknown method (no resources)", req: mcptest.Call("resources/list", ""), status: 404, code: -32601, id: "1"},
		{name: "subscriptions/listen", row: "unknown method (no listChanged)", req: mcptest.Call("subscriptions/listen", ""), status: 404, code: -32601, id: "1"},

		// Stage 7: in-method protocol errors, HTTP 200.
		{name: "unknown tool", row: "tools/call unknown tool", req: mcptest.ToolCall("nope", `{}`), status: 200, code: -32602, id: "1"},
		{name: "no name", row: "tools/call missing name", req: mcptest.Call("tools/call", `"arguments":{}`), status: 200, code: -32602, id: "1"},
		{name: "name not a string", row: "tools/call non-string name", req: mcptest.Call("tools/call", `"name":5`), status: 200, code: -32602, id: "1"},
		{name: "arguments an array", row: "tools/call non-object arguments", req: mcptest.ToolCall("echo", `["hi"]`), status: 200, code: -32602, id: "1"},
		{name: "arguments a string", row: "tools/call non-object arguments", req: mcptest.ToolCall("echo", `"hi"`), status: 200, code: -32602, id: "1"},
		{name: "tampered cursor", row: "invalid cursor", req: mcptest.Call("tools/list", `"cursor":"AAAA"`), status: 200, code: -32602, id: "1"},
		{name: "cursor not a string", row: "invalid cursor", req: mcptest.Call("tools/list", `"cursor":3`), status: 200, code: -32602, id: "1"},

		// A fault past a method: supervisor containment.
		{name: "fault past the method", row: "fault past a method (supervisor containment)", req: mcptest.ToolCall("bad_result", `{}`), status: 200, code: -32603, id: "1",
			check: func(t *testing.T, rep mcptest.Reply) {
				if rep.Msg.Error.Message != "Internal error" {
					t.Errorf("message = %q, want the fixed %q", rep.Msg.Error.Message, "Internal error")
				}
				if strings.Contains(string(rep.Raw), "exploded") {
					t.Errorf("crash reason leaked to the client: %s", rep.Raw)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := hs.Send(t, tc.req)
			rep.ExpectError(t, tc.status, tc.code, tc.id)
			if t.Failed() {
				t.Logf("docs/design.md §5 row: %s", tc.row)
			}
			if tc.check != nil {
				tc.check(t, rep)
			}
		})
	}
}

// TestAuthRejections is docs/design.md §5's auth rows (stage 3), one case
// per row and shape: the status, the WWW-Authenticate challenge exactly,
// the JSON-RPC code and the echoed id. The authenticator is a fake that
// picks each outcome by the token's name; package auth tests the real
// ones through the same rows. Every request needs the scope "mcp";
// admin_only needs "admin" too.
func TestAuthRejections(t *testing.T) {
	t.Parallel()
	hs := newAuthServer(t, nil, authTools()...)
	const md = `resource_metadata="` + testMetadata + `"`
	cases := []struct {
		name      string
		row       string
		req       mcptest.RPC
		status    int
		code      int
		id        string
		challenge string // "" asserts there is none
		header    [2]string
	}{
		{name: "no token", row: "auth missing/invalid", req: mcptest.Call("tools/list", ""),
			status: 401, code: -32600, id: "1", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "no token, scoped tool", row: "auth missing/invalid (the same challenge whatever the tool)", req: mcptest.ToolCall("admin_only", `{}`).WithID(7),
			status: 401, code: -32600, id: "7", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "no token, unknown tool", row: "auth missing/invalid (the same challenge whatever the tool)", req: mcptest.ToolCall("no_such_tool", `{}`).WithID(7),
			status: 401, code: -32600, id: "7", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "invalid token, scoped tool", row: "auth missing/invalid (the same challenge whatever the tool)", req: bearer(mcptest.ToolCall("admin_only", `{}`), "plain-error"),
			status: 401, code: -32600, id: "1", challenge: `Bearer error="invalid_token", ` + md + `, scope="mcp"`},
		{name: "token in the query string, scoped tool", row: "auth invalid request (the same challenge whatever the tool)", req: bearer(mcptest.ToolCall("admin_only", `{}`), "query").WithID(3),
			status: 400, code: -32600, id: "3", challenge: `Bearer error="invalid_request", error_description="access tokens are accepted in the Authorization header only", ` + md + `, scope="mcp"`},
		{name: "invalid token", row: "auth missing/invalid", req: bearer(mcptest.Call("tools/list", ""), "forged"),
			status: 401, code: -32600, id: "1", challenge: `Bearer error="invalid_token", error_description="bad tokenX-Injected: yes", ` + md + `, scope="mcp"`},
		{name: "plain error from the authenticator", row: "auth missing/invalid", req: bearer(mcptest.Call("tools/list", ""), "plain-error"),
			status: 401, code: -32600, id: "1", challenge: `Bearer error="invalid_token", ` + md + `, scope="mcp"`},
		{name: "no principal, no error", row: "auth missing/invalid", req: bearer(mcptest.Call("tools/list", ""), "nobody"),
			status: 401, code: -32600, id: "1", challenge: `Bearer error="invalid_token", ` + md + `, scope="mcp"`},
		{name: "notification without a token", row: "auth missing/invalid (before notification acceptance)", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
			status: 401, code: -32600, id: "null", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "no token beats a header mismatch", row: "auth missing/invalid (stage 3 before stage 5)", req: mcptest.Call("tools/list", "").With("Mcp-Method", "tools/call"),
			status: 401, code: -32600, id: "1", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "no token beats an unknown method", row: "auth missing/invalid (stage 3 before stage 6)", req: mcptest.Call("resources/list", ""),
			status: 401, code: -32600, id: "1", challenge: `Bearer ` + md + `, scope="mcp"`},
		{name: "token in the query string", row: "auth invalid request", req: bearer(mcptest.Call("tools/list", ""), "query").WithID(3),
			status: 400, code: -32600, id: "3", challenge: `Bearer error="invalid_request", error_description="access tokens are accepted in the Authorization header only", ` + md + `, scope="mcp"`},
		{name: "required scope missing", row: "auth insufficient scope", req: bearer(mcptest.Call("tools/list", ""), "outsider"),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", ` + md + `, scope="mcp"`},
		{name: "tool scope missing", row: "a tool's scope is missing: answered as an unknown tool (hidden_tool_test.go has the rest)", req: bearer(mcptest.ToolCall("admin_only", `{}`), "reader").WithID(9),
			status: 200, code: -32602, id: "9"},
		{name: "tool and required scopes missing", row: "auth insufficient scope (the required ones alone: the tool's stay hidden)", req: bearer(mcptest.ToolCall("admin_only", `{}`), "outsider"),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", ` + md + `, scope="mcp"`},
		{name: "insufficient scope from the authenticator", row: "auth insufficient scope", req: bearer(mcptest.Call("tools/list", ""), "narrow"),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", error_description="needs extra", ` + md + `, scope="mcp extra"`},
		{name: "credential cannot be checked", row: "auth unavailable", req: bearer(mcptest.ToolCall("echo", `{"text":"x"}`), "down").WithID(5),
			status: 503, code: -32603, id: "5", header: [2]string{"Retry-After", "5"}},
		{name: "authenticator panics", row: "authenticator panics", req: bearer(mcptest.Call("tools/list", ""), "panic").WithID(11),
			status: 200, code: -32603, id: "11"},
		{name: "string id echoed", row: "auth missing/invalid", req: mcptest.RPC{Body: `{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{"_meta":` + mcptest.Meta + `}}`, Headers: map[string]string{"Mcp-Method": "tools/list"}},
			status: 401, code: -32600, id: `"abc"`, challenge: `Bearer ` + md + `, scope="mcp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := hs.Send(t, tc.req)
			rep.ExpectError(t, tc.status, tc.code, tc.id)
			if got := rep.Header.Values("WWW-Authenticate"); tc.challenge == "" && len(got) != 0 || tc.challenge != "" && (len(got) != 1 || got[0] != tc.challenge) {
				t.Errorf("WWW-Authenticate = %q\n                want %q", got, tc.challenge)
			}
			if tc.header[0] != "" {
				wantHeader(t, rep, tc.header[0], tc.header[1])
			}
			if t.Failed() {
				t.Logf("docs/design.md §5 row: %s", tc.row)
			}
		})
	}
	// With a token that grants everything needed, the same requests pass.
	hs.Send(t, bearer(mcptest.Call("tools/list", ""), "reader")).ExpectResult(t, "1")
	hs.Send(t, bearer(mcptest.ToolCall("admin_only", `{}`), "admin")).ExpectResult(t, "1")
	if rep := hs.Send(t, bearer(mcptest.RPC{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, "reader")); rep.Status != 202 {
		t.Errorf("authenticated notification: %d", rep.Status)
	}
	hs.Send(t, bearer(mcptest.Call("tools/list", "").With("Mcp-Method", "tools/call"), "reader")).ExpectError(t, 400, -32020, "1")
}

// TestNotificationsAccepted: any valid notification is answered 202 with an
// empty body, whatever its method and params (docs/design.md §3 stage 4).
func TestNotificationsAccepted(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":"not even an object"}`,
		`{"jsonrpc":"2.0","method":"whatever/else","params":{"_meta":{}}}`,
	} {
		rep := hs.Send(t, mcptest.RPC{Body: body})
		if rep.Status != http.StatusAccepted || len(rep.Raw) != 0 {
			t.Errorf("%s: status %d body %q, want 202 and empty", body, rep.Status, rep.Raw)
		}
	}
}

func wantHeader(t *testing.T, rep mcptest.Reply, key, value string) {
	t.Helper()
	if got := rep.Header.Get(key); got != value {
		t.Errorf("%s = %q, want %q", key, got, value)
	}
}

func wantData(t *testing.T, rep mcptest.Reply, want map[string]any) {
	t.Helper()
	if got := rep.Data(t); !reflect.DeepEqual(got, want) {
		t.Errorf("data = %v, want %v", got, want)
	}
}

// wantMessage checks the JSON-RPC error's message.
func wantMessage(t *testing.T, rep mcptest.Reply, want string) {
	t.Helper()
	if rep.Msg.Error == nil || rep.Msg.Error.Message != want {
		t.Errorf("error %+v, want the message %q", rep.Msg.Error, want)
	}
}

func withVerb(r mcptest.RPC, verb string) mcptest.RPC { r.Verb = verb; return r }

// TestParamHeaders: an argument whose schema carries x-mcp-header must be
// mirrored in its Mcp-Param-<Name> header (SEP-2243; docs/design.md §5:
// -32020, HTTP 400, when they disagree).
func TestParamHeaders(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	cases := []struct {
		name    string
		args    string
		headers map[string]string
		ok      bool
	}{
		{"all match", `{"region":"eu-west","level":3,"verbose":true}`, map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-Level": "3", "Mcp-Param-Verbose": "true"}, true},
		{"header name case-insensitive", `{"region":"eu"}`, map[string]string{"mcp-param-region": "eu"}, true},
		{"OWS trimmed", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "  eu\t"}, true},
		{"integer compared numerically", `{"level":42}`, map[string]string{"Mcp-Param-Level": "042"}, true},
		{"Base64 sentinel", `{"region":"日本"}`, map[string]string{"Mcp-Param-Region": "=?base64?5pel5pys?="}, true},
		{"literal without the sentinel's suffix", `{"region":"=?base64?abc"}`, map[string]string{"Mcp-Param-Region": "=?base64?abc"}, true},
		{"no arguments, no headers", ``, nil, true},
		{"undeclared argument needs no header", `{"note":"x"}`, nil, true},
		{"null argument, no header", `{"region":null}`, nil, true},
		{"header missing", `{"region":"eu"}`, nil, false},
		{"value differs", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"value case differs", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "EU"}, false},
		{"integer differs", `{"level":3}`, map[string]string{"Mcp-Param-Level": "4"}, false},
		{"integer not a number", `{"level":3}`, map[string]string{"Mcp-Param-Level": "three"}, false},
		{"boolean differs", `{"verbose":false}`, map[string]string{"Mcp-Param-Verbose": "true"}, false},
		{"bad Base64 padding", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "=?base64?ZX?="}, false},
		{"bad Base64 alphabet", `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "=?base64?Z$U=?="}, false},
		{"header without its argument", `{}`, map[string]string{"Mcp-Param-Region": "eu"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mcptest.ToolCall("routed", tc.args)
			for k, v := range tc.headers {
				r = r.With(k, v)
			}
			rep := hs.Send(t, r)
			if tc.ok {
				rep.ExpectResult(t, "1")
			} else {
				rep.ExpectError(t, 400, -32020, "1")
			}
		})
	}
	t.Run("header sent twice", func(t *testing.T) {
		t.Parallel()
		r := mcptest.ToolCall("routed", `{"region":"eu"}`).WithExtra("Mcp-Param-Region", "eu").WithExtra("Mcp-Param-Region", "eu")
		hs.Send(t, r).ExpectError(t, 400, -32020, "1")
	})
}

// TestWriterWithoutWriteString: behind a middleware whose ResponseWriter
// has only the interface's methods (no WriteString), every kind of answer
// (a result, a precomputed result, a method's error, a rejection) arrives
// byte for byte as it does on net/http's own writer.
func TestWriterWithoutWriteString(t *testing.T) {
	t.Parallel()
	srv, direct := newTestServer(t, nil, nil)
	wrapped := mcptest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(struct{ http.ResponseWriter }{w}, r)
	}), direct.Info)
	for _, rpc := range []mcptest.RPC{
		mcptest.ToolCall("echo", `{"text":"hi \"there\" é"}`),
		mcptest.Call("tools/list", ""),
		mcptest.ToolCall("nope", `{}`),
		mcptest.ToolCall("echo", `{"text":"hi"}`).With("Mcp-Name", "add"),
	} {
		wantStatus, want := direct.Post(t, t.Context(), rpc)
		gotStatus, got := wrapped.Post(t, t.Context(), rpc)
		if gotStatus != wantStatus || got != want {
			t.Errorf("through a plain writer: %d %s\nwant %d %s", gotStatus, got, wantStatus, want)
		}
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,`) {
			t.Errorf("answer %s", got)
		}
	}
}
