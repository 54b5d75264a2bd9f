package wymcp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// FuzzServeHTTP drives the whole request path with arbitrary bodies and
// MCP header values: every input gets one of the answers DESIGN §5
// specifies — a status from its table, and a JSON-RPC message (or 202 with
// no body) — never a panic, a hang or an empty 200.
func FuzzServeHTTP(f *testing.F) {
	good := mcptest.ToolCall("echo", `{"text":"hi"}`).Body
	f.Add(good, "tools/call", "echo", "2026-07-28", "")
	f.Add(mcptest.Call("tools/list", `"cursor":"x"`).Body, "tools/list", "", "2026-07-28", "")
	f.Add(mcptest.ToolCall("routed", `{"region":"eu","level":3}`).Body, "tools/call", "routed", "2026-07-28", "=?base64?ZXU=?=")
	f.Add(`{"jsonrpc":"2.0","method":"notifications/x"}`, "", "", "", "")
	f.Add(`[1]`, "x", "y", "z", "w")
	f.Add(mcptest.ToolCall("needs_sampling", `{}`).Body, "tools/call", "needs_sampling", "2026-07-28", "")
	srv, _ := newTestServer(f, nil, nil) // only the handler is fuzzed, in process
	allowed := map[int]bool{200: true, 202: true, 400: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true, 503: true}
	f.Fuzz(func(t *testing.T, body, method, name, version, param string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range map[string]string{"Mcp-Method": method, "Mcp-Name": name, "MCP-Protocol-Version": version, "Mcp-Param-Region": param} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if !allowed[rec.Code] {
			t.Fatalf("status %d is not in DESIGN §5", rec.Code)
		}
		if rec.Code == 202 {
			if rec.Body.Len() != 0 {
				t.Fatalf("202 with a body: %q", rec.Body)
			}
			return
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" || (msg.Result == nil) == (msg.Error == nil) {
			t.Fatalf("status %d, answer is not one JSON-RPC response: %q", rec.Code, rec.Body)
		}
		if rec.Code != 200 && msg.Error == nil {
			t.Fatalf("status %d with a result", rec.Code)
		}
	})
}
