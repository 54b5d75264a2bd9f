package wymcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
)

// TestDiscover: server/discover returns exactly the DiscoverResult of
// docs/design.md §5 — supportedVersions, capabilities {"tools":{}} (no
// listChanged: the tool set is fixed), instructions when set, ttlMs,
// cacheScope, and the server in _meta.
func TestDiscover(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, &wymcp.Options{Instructions: "Use echo to echo."}, nil)
	rep := hs.Send(t, mcptest.Call("server/discover", ""))
	rep.ExpectResult(t, "1")
	want := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"Use echo to echo.","ttlMs":300000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"wymcp-test","version":"0.0.1"}}}`
	if got := string(rep.Msg.Result); got != want {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
	if want := `{"jsonrpc":"2.0","id":1,"result":` + want + `}`; string(rep.Raw) != want {
		t.Errorf("message\n got %s\nwant %s", rep.Raw, want)
	}
}

// TestDiscoverClientInfoOptional: clientInfo may be omitted (spec PR #3002).
func TestDiscoverClientInfoOptional(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	rep := hs.Send(t, mcptest.RPC{Body: `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		Headers: map[string]string{"Mcp-Method": "server/discover"}})
	rep.ExpectResult(t, `"d"`)
}

// TestToolsListPages walks every page: deterministic order, opaque cursors
// that chain, ttlMs and cacheScope on every page, the last page without a
// nextCursor, and the same walk twice giving the same bytes.
func TestToolsListPages(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, &wymcp.Options{PageSize: 3, CacheTTL: -1}, nil)
	walk := func() ([]string, []string) {
		var names, pages []string
		cursor := ""
		for i := 0; ; i++ {
			req := mcptest.Call("tools/list", "")
			if i > 0 {
				req = mcptest.Call("tools/list", `"cursor":`+mcptest.Quote(cursor))
			}
			rep := hs.Send(t, req)
			res := rep.ExpectResult(t, "1")
			pages = append(pages, string(rep.Raw))
			if res["ttlMs"] != float64(0) || res["cacheScope"] != "public" {
				t.Errorf("page %d: ttlMs %v cacheScope %v", i, res["ttlMs"], res["cacheScope"])
			}
			list, _ := res["tools"].([]any)
			if len(list) == 0 || len(list) > 3 {
				t.Fatalf("page %d has %d tools", i, len(list))
			}
			for _, tool := range list {
				m := tool.(map[string]any)
				names = append(names, m["name"].(string))
				if m["description"] == "" || m["inputSchema"] == nil {
					t.Errorf("tool %v lacks description or inputSchema", m["name"])
				}
			}
			next, ok := res["nextCursor"].(string)
			if !ok {
				return names, pages
			}
			if strings.Contains(next, "3") && len(next) < 8 {
				t.Errorf("cursor %q looks like an offset, not opaque", next)
			}
			cursor = next
		}
	}
	names, pages := walk()
	want := []string{"echo", "add", "no_args", "fail", "panic", "bad_result", "slow", "short_deadline", "stubborn", "needs_sampling", "routed", "progress"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	names2, pages2 := walk()
	if !reflect.DeepEqual(names, names2) || !reflect.DeepEqual(pages, pages2) {
		t.Errorf("second walk differs")
	}
	// An empty cursor is valid and means the start.
	rep := hs.Send(t, mcptest.Call("tools/list", `"cursor":""`))
	rep.ExpectResult(t, "1")
	if string(rep.Raw) != pages[0] {
		t.Errorf("empty cursor did not give the first page")
	}
}

// TestCursorFromAnotherToolSet: a cursor is bound to the tool set and the
// secret; another server refuses it with -32602.
func TestCursorFromAnotherToolSet(t *testing.T) {
	t.Parallel()
	_, a := newTestServer(t, &wymcp.Options{PageSize: 2}, nil)
	_, b := newTestServer(t, &wymcp.Options{PageSize: 2, CursorSecret: []byte("other")}, nil)
	res := a.Send(t, mcptest.Call("tools/list", "")).ExpectResult(t, "1")
	cursor := res["nextCursor"].(string)
	a.Send(t, mcptest.Call("tools/list", `"cursor":`+mcptest.Quote(cursor))).ExpectResult(t, "1")
	b.Send(t, mcptest.Call("tools/list", `"cursor":`+mcptest.Quote(cursor))).ExpectError(t, 200, -32602, "1")
}

// TestRawSchemaByteForByte: a raw tool's schema reaches tools/list as the
// bytes it was built with; a typed tool's is inferred.
func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)
	rep := hs.Send(t, mcptest.Call("tools/list", ""))
	rep.ExpectResult(t, "1")
	var res struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rep.Msg.Result, &res); err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	out := map[string]string{}
	for _, tool := range res.Tools {
		byName[tool.Name] = string(tool.InputSchema)
		out[tool.Name] = string(tool.OutputSchema)
	}
	if got, want := byName["echo"], `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`; got != want {
		t.Errorf("echo inputSchema\n got %s\nwant %s", got, want)
	}
	var add map[string]any
	if err := json.Unmarshal([]byte(byName["add"]), &add); err != nil || add["type"] != "object" {
		t.Errorf("add inputSchema %s", byName["add"])
	}
	if out["add"] == "" {
		t.Errorf("add has no outputSchema")
	}
}

// TestToolsCall covers the tools/call results of docs/design.md §5:
// content, a typed tool's structuredContent with the same JSON as text, a
// call without arguments, and each isError row.
func TestToolsCall(t *testing.T) {
	t.Parallel()
	_, hs := newTestServer(t, nil, nil)

	t.Run("echo", func(t *testing.T) {
		t.Parallel()
		rep := hs.Send(t, mcptest.ToolCall("echo", `{"text":"hello"}`))
		rep.ExpectResult(t, "1")
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"wymcp-test","version":"0.0.1"}}}}`
		if string(rep.Raw) != want {
			t.Errorf("\n got %s\nwant %s", rep.Raw, want)
		}
	})
	t.Run("typed structured", func(t *testing.T) {
		t.Parallel()
		res := hs.Send(t, mcptest.ToolCall("add", `{"a":2,"b":3.5}`)).ExpectResult(t, "1")
		if !reflect.DeepEqual(res["structuredContent"], map[string]any{"sum": 5.5}) {
			t.Errorf("structuredContent = %v", res["structuredContent"])
		}
		text, isErr := mcptest.ToolText(t, res)
		if isErr || mcptest.CompactJSON(t, text) != `{"sum":5.5}` {
			t.Errorf("text = %q isError %v", text, isErr)
		}
	})
	t.Run("arguments absent", func(t *testing.T) {
		t.Parallel()
		res := hs.Send(t, mcptest.ToolCall("no_args", "")).ExpectResult(t, "1")
		if text, isErr := mcptest.ToolText(t, res); text != "ok" || isErr {
			t.Errorf("text %q isError %v", text, isErr)
		}
	})
	t.Run("string id", func(t *testing.T) {
		t.Parallel()
		r := mcptest.ToolCall("echo", `{"text":"x"}`)
		r.Body = strings.Replace(r.Body, `"id":1`, `"id":"abc-1"`, 1)
		hs.Send(t, r).ExpectResult(t, `"abc-1"`)
	})
	t.Run("Mcp-Name Base64 and white space", func(t *testing.T) {
		t.Parallel()
		hs.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`).With("Mcp-Name", "=?base64?ZWNobw==?=")).ExpectResult(t, "1")
		hs.Send(t, mcptest.ToolCall("echo", `{"text":"x"}`).With("Mcp-Name", " \techo \t")).ExpectResult(t, "1")
	})
	t.Run("capability declared", func(t *testing.T) {
		t.Parallel()
		r := mcptest.ToolCall("needs_sampling", `{}`)
		r.Body = strings.Replace(r.Body, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`, 1)
		hs.Send(t, r).ExpectResult(t, "1")
	})

	isErrorRows := []struct {
		name, tool, args, text string
	}{
		{"arguments fail the schema", "echo", `{"text":5}`, "Invalid arguments for tool echo: at '/text': got number, want string"},
		{"missing required argument", "echo", `{}`, "Invalid arguments for tool echo: at '': missing property 'text'"},
		{"unknown argument", "add", `{"a":1,"b":2,"c":3}`, "Invalid arguments for tool add: at '': additional property 'c' not allowed"},
		{"tool returns an error", "fail", `{}`, "this tool always fails"},
		{"tool panics", "panic", `{}`, "Tool execution failed: internal error"},
		{"tool deadline", "short_deadline", `{}`, "Tool short_deadline timed out after 50ms"},
	}
	for _, row := range isErrorRows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			res := hs.Send(t, mcptest.ToolCall(row.tool, row.args)).ExpectResult(t, "1")
			text, isErr := mcptest.ToolText(t, res)
			if !isErr || text != row.text {
				t.Errorf("isError %v text %q, want true %q", isErr, text, row.text)
			}
		})
	}
}
