package main

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/tools"
)

// TestConformanceToolSet checks the fixtures the conformance suite relies
// on without running the suite: names and order, the verbatim schema, the
// header and capability declarations, and real PNG and WAV data.
func TestConformanceToolSet(t *testing.T) {
	t.Parallel()
	ts, err := buildToolSet("conformance")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*tools.Tool{}
	var names []string
	for _, tool := range ts {
		names = append(names, tool.Name())
		byName[tool.Name()] = tool
	}
	if !slices.Equal(names, conformanceToolNames) {
		t.Errorf("tools = %q, want %q", names, conformanceToolNames)
	}
	// http-header-validation calls the first tool of tools/list with no
	// arguments.
	if names[0] != "test_simple_text" {
		t.Errorf("first tool = %q, want test_simple_text", names[0])
	}
	if got := string(toolrun.Of(byName["json_schema_2020_12_tool"]).Definition().InputSchema); got != jsonSchema202012 {
		t.Errorf("json_schema_2020_12_tool schema not kept verbatim:\n%s", got)
	}
	if hp := toolrun.Of(byName["test_x_mcp_header"]).HeaderParams(); len(hp) != 1 || hp[0].Name != "Region" || hp[0].Type != "string" || !slices.Equal(hp[0].Path, []string{"region"}) {
		t.Errorf("test_x_mcp_header header params = %+v, want Region on the string property region", hp)
	}
	if caps := toolrun.Of(byName["test_missing_capability"]).RequiredCapabilities(); !slices.Equal(caps, []string{"sampling"}) {
		t.Errorf("test_missing_capability requires %q, want [sampling]", caps)
	}

	pngData, err := tinyPNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil || img.Bounds().Dx() != 1 || img.Bounds().Dy() != 1 {
		t.Errorf("tinyPNG: decode = %v, bounds %v; want a 1x1 PNG", err, img.Bounds())
	}
	wav := tinyWAV()
	if len(wav) < 44 || string(wav[0:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" {
		t.Fatalf("tinyWAV: not a RIFF/WAVE file: % x", wav)
	}
	if riff := binary.LittleEndian.Uint32(wav[4:8]); int(riff) != len(wav)-8 {
		t.Errorf("tinyWAV: RIFF size %d, want %d", riff, len(wav)-8)
	}
	if data := binary.LittleEndian.Uint32(wav[40:44]); int(data) != len(wav)-44 {
		t.Errorf("tinyWAV: data size %d, want %d", data, len(wav)-44)
	}
}

// conformanceInfo ends every result of -tools conformance, which names the
// server after its set.
const conformanceInfo = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"wymcp-conformance","version":"0.1.0"}}`

// TestConformanceServe calls the fixtures whose answers are not a plain
// result: progress over SSE, the -32021 refusal, and the tool error.
func TestConformanceServe(t *testing.T) {
	t.Parallel()
	s := start(t, "-tools", "conformance")

	t.Run("simple text", func(t *testing.T) {
		t.Parallel()
		// The suite omits arguments here.
		status, got := s.post(t, t.Context(), "tools/call", "test_simple_text",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text",`+meta+`}}`)
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"This is a simple text response for testing."}],"resultType":"complete",` + conformanceInfo + `}}`
		if status != http.StatusOK || got != want {
			t.Errorf("got %d %s\nwant 200 %s", status, got, want)
		}
	})

	t.Run("error handling", func(t *testing.T) {
		t.Parallel()
		status, got := s.post(t, t.Context(), "tools/call", "test_error_handling", callBody("test_error_handling", `{}`))
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true,"resultType":"complete",` + conformanceInfo + `}}`
		if status != http.StatusOK || got != want {
			t.Errorf("got %d %s\nwant 200 %s", status, got, want)
		}
	})

	t.Run("missing capability", func(t *testing.T) {
		t.Parallel()
		status, got := s.post(t, t.Context(), "tools/call", "test_missing_capability", callBody("test_missing_capability", `{}`))
		if status != http.StatusBadRequest || !strings.Contains(got, `"code":-32021`) || !strings.Contains(got, `"requiredCapabilities":{"sampling":{}}`) {
			t.Errorf("got %d %s, want 400, -32021 and requiredCapabilities {sampling:{}}", status, got)
		}
	})

	t.Run("progress", func(t *testing.T) {
		t.Parallel()
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},` +
			`"_meta":{"progressToken":"progress-test-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "test_tool_with_progress")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type = %q, want text/event-stream", ct)
		}
		progress := func(p string) string {
			return `event: message` + "\n" + `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"progress-test-1","progress":` + p + `,"total":100}}` + "\n\n"
		}
		want := progress("0") + progress("50") + progress("100") +
			`event: message` + "\n" + `data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Progress tool finished after 3 reports."}],"resultType":"complete",` + conformanceInfo + `}}` + "\n\n"
		if string(b) != want {
			t.Errorf("stream:\n got %q\nwant %q", b, want)
		}
	})
}
