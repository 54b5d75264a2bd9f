package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// TestAppendCallToolResult: the hand-written encoding of a tools/call result
// is valid JSON and means what the reflective encoding of the same result
// means, for every kind of block and member.
func TestAppendCallToolResult(t *testing.T) {
	t.Parallel()
	size := int64(12)
	prio := 0.5
	text := "line\n\"quoted\" <tag> & \u2028 é 😀 \x01"
	results := []*protocol.CallToolResult{
		{},
		protocol.TextResult(text),
		protocol.ErrorResult("failed"),
		{Content: []protocol.Content{
			&protocol.TextContent{Text: ""},
			&protocol.TextContent{Text: "annotated", Annotations: &protocol.Annotations{Audience: []string{"user"}, Priority: &prio}},
			&protocol.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MimeType: "image/png"},
			&protocol.AudioContent{Data: []byte("RIFF"), MimeType: "audio/wav"},
			&protocol.ResourceLink{URI: "file:///x", Name: "x", Size: &size},
			&protocol.EmbeddedResource{Resource: protocol.ResourceContents{URI: "test://r", MimeType: "text/plain", Text: &text}},
		}},
		{Content: []protocol.Content{protocol.TextResult("{}").Content[0]}, StructuredContent: json.RawMessage(`{"sum":5.5}`)},
		{Content: []protocol.Content{}, StructuredContent: map[string]any{"b": 1, "a": []int{1, 2}}},
	}
	meta := wire.RawJSON(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	for i, r := range results {
		got, err := wire.AppendCallToolResult(nil, r, meta)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		var gotV map[string]any
		if err := json.Unmarshal(got, &gotV); err != nil {
			t.Fatalf("%d: invalid JSON %v: %s", i, err, got)
		}
		content := []wire.RawJSON{}
		for _, c := range r.Content {
			b, err := wire.MarshalContent(c)
			if err != nil {
				t.Fatal(err)
			}
			content = append(content, b)
		}
		ref, err := wire.Marshal(struct {
			Content           []wire.RawJSON `json:"content"`
			StructuredContent any            `json:"structuredContent,omitempty"`
			IsError           bool           `json:"isError,omitzero"`
			ResultType        string         `json:"resultType"`
			Meta              wire.RawJSON   `json:"_meta"`
		}{content, r.StructuredContent, r.IsError, "complete", meta})
		if err != nil {
			t.Fatal(err)
		}
		var refV map[string]any
		if err := json.Unmarshal(ref, &refV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotV, refV) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, ref)
		}
	}
	if _, err := wire.AppendCallToolResult(nil, protocol.TextResult("\xff"), meta); err == nil {
		t.Errorf("invalid UTF-8 text encoded without error")
	}
}

// TestAppendInputRequiredResult: the input_required result is valid JSON
// with the requests keyed in order, the state and the _meta, whatever the
// keys hold.
func TestAppendInputRequiredResult(t *testing.T) {
	t.Parallel()
	meta := wire.RawJSON(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`)
	reqs := []wire.InputRequest{
		{Key: "user_name", Method: "elicitation/create", Params: wire.RawJSON(`{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)},
		{Key: "quote\"and\\slash é", Method: "roots/list", Params: wire.RawJSON(`{}`)},
	}
	got, err := wire.AppendInputRequiredResult(nil, reqs, "state-AbC_-9", meta)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resultType":"input_required","inputRequests":{"user_name":{"method":"elicitation/create","params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}},` +
		`"quote\"and\\slash é":{"method":"roots/list","params":{}}},"requestState":"state-AbC_-9","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	if _, err := wire.AppendInputRequiredResult(nil, []wire.InputRequest{{Key: "\xff", Method: "roots/list", Params: wire.RawJSON(`{}`)}}, "s", meta); err == nil {
		t.Error("a key that is not UTF-8 must fail the encoding")
	}
}
