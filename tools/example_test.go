package tools_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	json "github.com/goccy/go-json/v2"

	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// A typed tool: the input schema comes from addIn, and addOut's JSON is
// both the structuredContent and a text block. Arguments that fail the
// schema are answered with an isError result the model can act on; the
// handler does not run.
func ExampleNew() {
	type addIn struct {
		A int `json:"a" jsonschema:"first addend"`
		B int `json:"b" jsonschema:"second addend"`
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	add := tools.Must(tools.New("add", "Adds two integers.",
		func(_ context.Context, in addIn) (addOut, error) { return addOut{in.A + in.B}, nil },
		tools.WithTitle("Add"),
		tools.WithAnnotations(protocol.ToolAnnotations{ReadOnlyHint: ptr(true)})))

	url, stop := mcptest.ServeExample(add)
	defer stop()
	fmt.Println(call(url, "add", `{"a":2,"b":3}`))
	fmt.Println(call(url, "add", `{"a":2}`))
	// Output:
	// {"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}
	// {"content":[{"type":"text","text":"Invalid arguments for tool add: at '': missing property 'b'"}],"isError":true}
}

// A raw tool: its schema is kept byte for byte, and the handler decodes the
// arguments itself. They are its own copy, to keep if it likes.
func ExampleNewRaw() {
	schema := []byte(`{
  "type": "object",
  "properties": {"text": {"type": "string"}},
  "required": ["text"]
}`)
	shout := tools.Must(tools.NewRaw("shout", "Upper-cases text.", schema,
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return protocol.TextResult(strings.ToUpper(in.Text)), nil
		}, tools.WithDeadline(5*time.Second)))

	url, stop := mcptest.ServeExample(shout)
	defer stop()
	fmt.Println(call(url, "shout", `{"text":"hello"}`))
	fmt.Println(call(url, "shout", `{"text":7}`))
	// Output:
	// {"content":[{"type":"text","text":"HELLO"}]}
	// {"content":[{"type":"text","text":"Invalid arguments for tool shout: at '/text': got number, want string"}],"isError":true}
}

// A tool that needs the user's answer asks for it; the call answers
// input_required until the client retries with the answer (and the sealed
// requestState). CanAsk lets the tool do without an input the client
// cannot give: this client declared no elicitation capability.
func ExampleAsk() {
	form := protocol.ElicitRequest{
		Message:         "What is your name?",
		RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	greet := tools.Must(tools.NewRaw("greet", "Greets the user by the name they give.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			name := tools.Elicit("user_name", form, new(protocol.ElicitResult))
			if !tools.CanAsk(ctx, name) {
				return protocol.TextResult("Hello, stranger!"), nil
			}
			if err := tools.Ask(ctx, name); err != nil {
				return nil, err // tools.ErrInputRequired: the call waits for the answer
			}
			return protocol.TextResult("Hello!"), nil
		}))

	url, stop := mcptest.ServeExample(greet)
	defer stop()
	fmt.Println(call(url, "greet", `{}`))
	// Output:
	// {"content":[{"type":"text","text":"Hello, stranger!"}]}
}

// A raw tool may declare its output schema; a result whose
// structuredContent does not match it is answered as the tool's error
// instead of reaching a client that would reject it. Title, icons and _meta
// are what tools/list shows of the tool.
func ExampleWithOutputSchema() {
	stats := tools.Must(tools.NewRaw("stats", "Counts the words of a text.",
		[]byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			n := len(strings.Fields(in.Text))
			return &protocol.CallToolResult{
				Content:           []protocol.Content{&protocol.TextContent{Text: fmt.Sprint(n, " words")}},
				StructuredContent: map[string]any{"words": n},
			}, nil
		},
		tools.WithOutputSchema([]byte(`{"type":"object","properties":{"words":{"type":"integer","minimum":1}},"required":["words"]}`)),
		tools.WithTitle("Word count"),
		tools.WithIcons(protocol.Icon{Src: "https://example.com/stats.svg", MimeType: "image/svg+xml"}),
		tools.WithMeta(map[string]any{"com.example/team": "text"})))

	url, stop := mcptest.ServeExample(stats)
	defer stop()
	fmt.Println(call(url, "stats", `{"text":"one two three"}`))
	fmt.Println(call(url, "stats", `{"text":""}`))
	// Output:
	// {"content":[{"type":"text","text":"3 words"}],"structuredContent":{"words":3}}
	// {"content":[{"type":"text","text":"Tool stats returned structured content that does not match its output schema: at '/words': got 0, want at least 1"}],"isError":true}
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

func ptr[T any](v T) *T { return &v }
