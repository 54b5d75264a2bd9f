package wymcp_test

import (
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestRedteamLegacyMirrorHeadersUnchecked: the 2026-07-28 contract makes
// Mcp-Method, Mcp-Name and Mcp-Param-* mirrors of the body that the server
// refuses to see disagree (-32020, docs/design.md §5), so that a gateway
// routing or authorizing on the headers and the server read one message.
// With Options.Versions serving 2025, a request that drops its `_meta`
// protocol version and names 2025-11-25 in MCP-Protocol-Version keeps the
// same headers, and they are no longer compared with the body: the gateway
// sees one tool, the server runs another.
func TestRedteamLegacyMirrorHeadersUnchecked(t *testing.T) {
	t.Parallel()
	_, e := newTestServer(t, &wymcp.Options{Versions: allVersions}, nil)

	// Control: the 2026-07-28 path refuses the mismatch.
	modern := mcptest.ToolCall("add", `{"a":1,"b":2}`).With("Mcp-Name", "echo")
	if rep := e.Send(t, modern); rep.Status != 400 || !strings.Contains(string(rep.Raw), "-32020") {
		t.Fatalf("2026-07-28 control: %d %s", rep.Status, rep.Raw)
	}

	cases := []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"Mcp-Name names another tool",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
		{"Mcp-Method names another method",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
			map[string]string{"Mcp-Method": "tools/list"}},
		{"Mcp-Param-Region disagrees with the argument",
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"routed","arguments":{"region":"eu-west"}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "routed", "Mcp-Param-Region": "us-east"}},
	}
	for _, c := range cases {
		status, _, body := legacyRequest(t, e, "2025-11-25", c.body, c.hdr)
		if status != 400 || !strings.Contains(body, `"code":-32020`) {
			t.Errorf("%s: the 2025-era request was served: %d %s\n(want 400 -32020, as the same headers get on the 2026-07-28 path)", c.name, status, body)
		}
	}
}
