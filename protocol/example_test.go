package protocol_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// A result of several content blocks: text, an image, a link to a resource
// the client may fetch (with annotations for the client), and a resource
// embedded whole. The server writes each with its "type".
func ExampleCallToolResult() {
	priority := 0.8
	size := int64(2048)
	report := "quarterly figures"
	chart := tools.Must(tools.NewRaw("chart", "Draws the quarter's chart.", []byte(`{"type":"object"}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{
				&protocol.TextContent{Text: "Q3 at a glance"},
				&protocol.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MimeType: "image/png"},
				&protocol.ResourceLink{URI: "file:///reports/q3.pdf", Name: "q3.pdf", MimeType: "application/pdf", Size: &size,
					Annotations: &protocol.Annotations{Audience: []string{"user"}, Priority: &priority}},
				&protocol.EmbeddedResource{Resource: protocol.ResourceContents{URI: "file:///reports/q3.txt", MimeType: "text/plain", Text: &report}},
			}}, nil
		}))
	url, stop := mcptest.ServeExample(chart)
	defer stop()
	fmt.Println(call(url, "chart", `{}`))
	// Output:
	// {"content":[{"type":"text","text":"Q3 at a glance"},{"type":"image","data":"iVBORw==","mimeType":"image/png"},{"type":"resource_link","uri":"file:///reports/q3.pdf","name":"q3.pdf","mimeType":"application/pdf","size":2048,"annotations":{"audience":["user"],"priority":0.8}},{"type":"resource","resource":{"uri":"file:///reports/q3.txt","mimeType":"text/plain","text":"quarterly figures"}}]}
}

// What a tool asks the client for, and how it reads the answers: a form
// (its Action says whether the user accepted, declined or cancelled), a
// completion from the client's model with the model preferred, the
// client's roots. Here the client has answered nothing yet, so the call
// answers with the requests.
func ExampleElicitRequest() {
	form := protocol.ElicitRequest{Message: "Which city?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
	prompt := protocol.CreateMessageRequest{
		MaxTokens:        50,
		Messages:         []protocol.SamplingMessage{{Role: "user", Content: &protocol.TextContent{Text: "A fact about Paris?"}}},
		ModelPreferences: &protocol.ModelPreferences{Hints: []protocol.ModelHint{{Name: "small"}}},
	}
	trip := tools.Must(tools.NewRaw("trip", "Plans a trip.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var city protocol.ElicitResult
			var fact protocol.CreateMessageResult
			var roots protocol.ListRootsResult
			if err := tools.Ask(ctx, tools.Elicit("city", form, &city), tools.Sample("fact", prompt, &fact), tools.ListRoots("roots", &roots)); err != nil {
				return nil, err
			}
			switch city.Action {
			case protocol.ElicitDecline, protocol.ElicitCancel:
				return protocol.TextResult("No trip, then."), nil
			}
			var where struct {
				City string `json:"city"`
			}
			if err := city.DecodeContent(&where); err != nil {
				return nil, err
			}
			text, _ := fact.Text()
			var first protocol.Root
			if len(roots.Roots) > 0 {
				first = roots.Roots[0]
			}
			return protocol.TextResult(where.City + ": " + text + " (plans saved in " + first.URI + ")"), nil
		}))
	url, stop := mcptest.ServeExample(trip)
	defer stop()
	res := mcptest.ToolCall("trip", `{}`).WithCapabilities(`{"elicitation":{},"sampling":{},"roots":{}}`)
	var got struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	answer, err := mcptest.Result(url, res)
	if err != nil {
		log.Fatal(err)
	}
	if err := json.Unmarshal([]byte(answer), &got); err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"city", "fact", "roots"} {
		fmt.Println(key, string(got.InputRequests[key]))
	}
	// Output:
	// city {"method":"elicitation/create","params":{"mode":"form","message":"Which city?","requestedSchema":{"type":"object","properties":{"city":{"type":"string"}}}}}
	// fact {"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"A fact about Paris?"}}],"maxTokens":50,"modelPreferences":{"hints":[{"name":"small"}]}}}
	// roots {"method":"roots/list","params":{}}
}

// call calls tool with args and returns its result, without the _meta and
// resultType every result carries.
func call(url, tool, args string) string {
	res, err := mcptest.CallResult(url, tool, args)
	if err != nil {
		log.Fatal(err)
	}
	return res
}
