package wire_test

import (
	"testing"

	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// TestAppendMatchesEncoder: the hand-written encodings of the precomputed
// results give, byte for byte, what the JSON encoder gives for the same
// values, for every optional member set and unset, and the same refusal of
// a string that is not UTF-8.
func TestAppendMatchesEncoder(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	icons := []protocol.Icon{{Src: "https://x/i.png", MimeType: "image/png", Sizes: []string{"48x48", "any"}, Theme: "dark"}, {Src: "data:,"}}
	tools := []wire.Tool{
		{Name: "min", InputSchema: wire.RawJSON(`{"type":"object"}`)},
		{
			Name: "full", Title: "Full <&> \u2028 é 😀", Description: "Does \"everything\"\n",
			InputSchema:  wire.RawJSON("{ \"type\" : \"object\",\n \"properties\": {} }"),
			OutputSchema: wire.RawJSON(`{"type":"array"}`),
			Annotations:  &protocol.ToolAnnotations{Title: "t", ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no},
			Icons:        icons,
			Meta:         map[string]any{"b": []any{1, "x"}, "a": map[string]any{"k": nil}},
		},
		{Name: "hints", InputSchema: wire.RawJSON(`{}`), Annotations: &protocol.ToolAnnotations{OpenWorldHint: &yes}},
		{Name: "empty-annotations", InputSchema: wire.RawJSON(`{}`), Annotations: &protocol.ToolAnnotations{}},
	}
	meta := wire.RawJSON(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	same := func(what string, got []byte, err error, v any) {
		t.Helper()
		want, werr := wire.Marshal(v)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s: error %v, encoder's %v", what, err, werr)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
	}
	for i := range tools {
		got, err := wire.AppendTool(nil, &tools[i])
		same(tools[i].Name, got, err, tools[i])
	}
	for _, ts := range [][]wire.Tool{nil, {}, tools} {
		for _, cursor := range []string{"", "abc"} {
			r := wire.ListToolsResult{ResultType: "complete", Tools: ts, NextCursor: cursor, TTLMs: 300000, CacheScope: "public", Meta: meta}
			got, err := wire.AppendListToolsResult(nil, r)
			same("tools/list", got, err, r)
		}
	}
	for _, instr := range []string{"", "Use <tools> & be kind"} {
		r := wire.DiscoverResult{ResultType: "complete", SupportedVersions: (*wire.Versions)(nil).List(), Capabilities: wire.RawJSON(`{"tools":{}}`),
			Instructions: instr, TTLMs: 0, CacheScope: "private", Meta: meta}
		got, err := wire.AppendDiscoverResult(nil, r)
		same("server/discover", got, err, r)
	}
	for _, impl := range []protocol.Implementation{
		{Name: "n", Version: "v"},
		{Name: "n", Version: "v", Title: "T", Description: "D", WebsiteURL: "https://w", Icons: icons},
	} {
		got, err := wire.AppendImplementation(nil, impl)
		same("implementation", got, err, impl)
	}
	bad := wire.Tool{Name: "bad", Description: "\xff", InputSchema: wire.RawJSON(`{}`)}
	got, err := wire.AppendTool(nil, &bad)
	same("invalid UTF-8", got, err, bad)
}
