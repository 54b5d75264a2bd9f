package main

import (
	"bytes"
	"context"
	"encoding/binary"

	"errors"
	"image"
	"image/color"
	"image/png"
	"time"

	gojson "github.com/goccy/go-json/v2"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The conformance tool set: the fixture tools that the official MCP
// conformance suite (@modelcontextprotocol/conformance, run by
// conformance/run.sh) calls by name, each with the exact behaviour its
// scenario checks. They are fixtures of the command, not part of the
// library. Names and texts come from the suite's scenario descriptions.

// conformanceToolNames is the order of tools/list. It matters:
// http-header-validation calls whichever tool tools/list returns first, so
// the first must be one that succeeds with no arguments (test_simple_text).
var conformanceToolNames = []string{
	"test_simple_text",
	"test_image_content",
	"test_audio_content",
	"test_embedded_resource",
	"test_multiple_content_types",
	"test_error_handling",
	"test_tool_with_progress",
	"json_schema_2020_12_tool",
	"test_x_mcp_header",
	"test_missing_capability",
	"test_streaming_elicitation",
	"test_logging_tool",
	"test_input_required_result_elicitation",
	"test_input_required_result_sampling",
	"test_input_required_result_list_roots",
	"test_input_required_result_request_state",
	"test_input_required_result_multiple_inputs",
	"test_input_required_result_multi_round",
	"test_input_required_result_tampered_state",
	"test_input_required_result_capabilities",
	"test_sampling",
	"test_elicitation",
	"test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums",
}

// jsonSchema202012 is the json-schema-2020-12 scenario's fixture schema,
// verbatim: the scenario checks that $schema, $defs (with $anchor),
// additionalProperties, allOf/anyOf and if/then/else reach tools/list
// unchanged, which a raw tool guarantees (its bytes are kept as written).
const jsonSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {
        "street": { "type": "string" },
        "city": { "type": "string" }
      }
    }
  },
  "properties": {
    "name": { "type": "string" },
    "address": { "$ref": "#/$defs/address" },
    "contactMethod": { "type": "string", "enum": ["phone", "email"] },
    "phone": { "type": "string" },
    "email": { "type": "string" }
  },
  "allOf": [
    { "anyOf": [ { "required": ["phone"] }, { "required": ["email"] } ] }
  ],
  "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
  "then": { "required": ["phone"] },
  "else": { "required": ["email"] },
  "additionalProperties": false
}`

// xMCPHeaderSchema declares one string argument mirrored in the
// Mcp-Param-Region header (SEP-2243). http-custom-header-server-validation
// picks the first tool with an x-mcp-header property and, in it, the first
// string-typed one; it sends every other required argument with a default,
// so a single required property keeps its requests exactly as planned.
const xMCPHeaderSchema = `{"type":"object","properties":{"region":{"type":"string","description":"Region to report on; mirrored in the Mcp-Param-Region header","x-mcp-header":"Region"}},"required":["region"],"additionalProperties":false}`

// progressStep is the pause between test_tool_with_progress's reports (the
// scenario says ~50 ms).
const progressStep = 50 * time.Millisecond

func conformanceTools() ([]*tools.Tool, error) {
	pngData, err := tinyPNG()
	if err != nil {
		return nil, err
	}
	wavData := tinyWAV()
	noArgs := []byte(noArgsSchema)
	result := func(r *protocol.CallToolResult) tools.RawHandler {
		return func(context.Context, []byte) (*protocol.CallToolResult, error) { return r, nil }
	}
	text := func(s string) *string { return &s }

	var errs []error
	add := func(t *tools.Tool, err error) *tools.Tool {
		errs = append(errs, err)
		return t
	}
	byName := map[string]*tools.Tool{
		"test_simple_text": add(tools.NewRaw("test_simple_text", "Returns one text block.", noArgs,
			result(protocol.TextResult("This is a simple text response for testing.")))),
		"test_image_content": add(tools.NewRaw("test_image_content", "Returns one image block (a 1x1 red PNG).", noArgs,
			result(&protocol.CallToolResult{Content: []protocol.Content{
				&protocol.ImageContent{Data: pngData, MimeType: "image/png"},
			}}))),
		"test_audio_content": add(tools.NewRaw("test_audio_content", "Returns one audio block (a few samples of silent WAV).", noArgs,
			result(&protocol.CallToolResult{Content: []protocol.Content{
				&protocol.AudioContent{Data: wavData, MimeType: "audio/wav"},
			}}))),
		"test_embedded_resource": add(tools.NewRaw("test_embedded_resource", "Returns one embedded text resource.", noArgs,
			result(&protocol.CallToolResult{Content: []protocol.Content{
				&protocol.EmbeddedResource{Resource: protocol.ResourceContents{
					URI: "test://embedded-resource", MimeType: "text/plain", Text: text("This is an embedded resource content."),
				}},
			}}))),
		"test_multiple_content_types": add(tools.NewRaw("test_multiple_content_types", "Returns a text, an image and an embedded resource block.", noArgs,
			result(&protocol.CallToolResult{Content: []protocol.Content{
				&protocol.TextContent{Text: "Multiple content types test:"},
				&protocol.ImageContent{Data: pngData, MimeType: "image/png"},
				&protocol.EmbeddedResource{Resource: protocol.ResourceContents{
					URI: "test://mixed-content-resource", MimeType: "application/json", Text: text(`{"test":"data","value":123}`),
				}},
			}}))),
		"test_error_handling": add(tools.NewRaw("test_error_handling", "Always fails with a tool error (an isError result).", noArgs,
			result(protocol.ErrorResult("This tool intentionally returns an error for testing")))),
		"test_tool_with_progress": add(tools.NewRaw("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100, about 50 ms apart, then returns.", noArgs,
			progressFixture)),
		"json_schema_2020_12_tool": add(tools.NewRaw("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", []byte(jsonSchema202012),
			result(protocol.TextResult("JSON Schema 2020-12 tool called.")))),
		"test_x_mcp_header": add(tools.NewRaw("test_x_mcp_header", "Echoes its region argument, which clients mirror in the Mcp-Param-Region header.", []byte(xMCPHeaderSchema),
			func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
				var in struct {
					Region string `json:"region"`
				}
				if err := gojson.Unmarshal(args, &in); err != nil {
					return nil, errors.New("arguments cannot be decoded")
				}
				return protocol.TextResult("region: " + in.Region), nil
			})),
		"test_missing_capability": add(tools.NewRaw("test_missing_capability", "Needs the client's sampling capability; without it the call is refused (-32021).", noArgs,
			result(protocol.TextResult("The client declared the sampling capability.")),
			tools.WithRequiredCapabilities("sampling"))),
		// A stateless server cannot send elicitation/create on the response
		// stream (no server→client requests); the scenario checks it does not.
		"test_streaming_elicitation": add(tools.NewRaw("test_streaming_elicitation", "Returns a plain result: no server-to-client request is ever sent on the response stream.", noArgs,
			result(protocol.TextResult("No elicitation was sent on the response stream.")))),
		// wymcp never sends notifications/message; the scenario checks none
		// comes without _meta logLevel.
		"test_logging_tool": add(tools.NewRaw("test_logging_tool", "Returns a plain result and sends no log notification.", noArgs,
			result(protocol.TextResult("Logging tool finished without logging.")))),
	}
	mrtr, err := inputRequiredFixtures()
	if err != nil {
		return nil, err
	}
	legacy, err := legacyAskFixtures()
	if err != nil {
		return nil, err
	}
	for _, t := range append(mrtr, legacy...) {
		byName[t.Name()] = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ts := make([]*tools.Tool, 0, len(conformanceToolNames))
	for _, name := range conformanceToolNames {
		t, ok := byName[name]
		if !ok {
			return nil, errors.New("conformance tool set: no tool " + name)
		}
		ts = append(ts, t)
		delete(byName, name)
	}
	if len(byName) > 0 {
		return nil, errors.New("conformance tool set: a tool is missing from conformanceToolNames")
	}
	return ts, nil
}

// progressFixture reports 0, 50 and 100 of 100 with pauses between them, as
// tools-call-with-progress expects; without a progress token the reports go
// nowhere and only the pauses remain.
func progressFixture(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
	total := 100.0
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			t := time.NewTimer(progressStep)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, context.Cause(ctx)
			}
		}
		tools.ReportProgress(ctx, p, &total, "")
	}
	return protocol.TextResult("Progress tool finished after 3 reports."), nil
}

// tinyPNG encodes a 1x1 red pixel: a real PNG, as the suite suggests.
func tinyPNG() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tinyWAV builds a real RIFF/WAVE file: 8 kHz, 8-bit mono PCM, 8 samples of
// silence (128 is the midpoint of unsigned 8-bit PCM).
func tinyWAV() []byte {
	const (
		rate     = 8000
		channels = 1
		bits     = 8
		samples  = 8
	)
	data := bytes.Repeat([]byte{128}, samples*channels*bits/8)
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(data)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))                         // fmt chunk size
	le(uint16(1))                          // PCM
	le(uint16(channels))                   // channels
	le(uint32(rate))                       // sample rate
	le(uint32(rate * channels * bits / 8)) // byte rate
	le(uint16(channels * bits / 8))        // block align
	le(uint16(bits))                       // bits per sample
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}
