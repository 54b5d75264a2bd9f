package toolrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

func ExampleNew() {
	type addIn struct {
		A int `json:"a" jsonschema:"first addend"`
		B int `json:"b" jsonschema:"second addend"`
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	add := toolrun.Must(toolrun.New("add", "Adds two integers.",
		func(_ context.Context, in addIn) (addOut, error) { return addOut{in.A + in.B}, nil }))

	fmt.Println(string(add.Definition().InputSchema))
	out := add.Call(context.Background(), wire.RawJSON(`{"a":2,"b":3}`))
	fmt.Println(out.Kind, out.Result.Content[0].(*protocol.TextContent).Text)
	out = add.Call(context.Background(), wire.RawJSON(`{"a":2}`))
	fmt.Println(out.Kind, out.Result.Content[0].(*protocol.TextContent).Text)
	// Output:
	// {"type":"object","properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer","description":"second addend"}},"required":["a","b"],"additionalProperties":false}
	// ok {"sum":5}
	// invalid_arguments Invalid arguments for tool add: at '': missing property 'b'
}

func ExampleNewRaw() {
	schema := []byte(`{
  "type": "object",
  "properties": {"text": {"type": "string"}},
  "required": ["text"]
}`)
	shout := toolrun.Must(toolrun.NewRaw("shout", "Upper-cases text.", schema,
		func(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := strictjson.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return protocol.TextResult(strings.ToUpper(in.Text)), nil
		}))

	fmt.Println(string(shout.Definition().InputSchema) == string(schema))
	out := shout.Call(context.Background(), wire.RawJSON(`{"text":"hello"}`))
	fmt.Println(out.Kind, out.Result.Content[0].(*protocol.TextContent).Text)
	out = shout.Call(context.Background(), wire.RawJSON(`{"text":7}`))
	fmt.Println(out.Kind, out.Result.Content[0].(*protocol.TextContent).Text)
	// Output:
	// true
	// ok HELLO
	// invalid_arguments Invalid arguments for tool shout: at '/text': got number, want string
}

// A handler asks the user for a name with Ask; the call runs once per
// round. Outside a server a Round stands in for the request: its Responses
// are the client's answers, its Carried what the previous round's Outcome
// carried. (A server does this from the request and its sealed
// requestState.)
func ExampleAsk() {
	form := protocol.ElicitRequest{
		Message:         "What is your name?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	greet := toolrun.Must(toolrun.NewRaw("greet", "Greets the user by the name they give.", []byte(`{"type":"object"}`),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			var answer protocol.ElicitResult
			if err := toolrun.Ask(ctx, toolrun.Elicit("user_name", form, &answer)); err != nil {
				return nil, err // toolrun.ErrInputRequired until the client answers
			}
			var who struct {
				Name string `json:"name"`
			}
			if answer.Action != protocol.ElicitAccept || answer.DecodeContent(&who) != nil {
				return protocol.TextResult("Hello, stranger!"), nil
			}
			return protocol.TextResult("Hello, " + who.Name + "!"), nil
		}))

	round1 := greet.Call(toolrun.WithRound(context.Background(), &toolrun.Round{}), nil)
	fmt.Println(round1.Kind, round1.Inputs[0].Key, round1.Inputs[0].Method)

	round2 := greet.Call(toolrun.WithRound(context.Background(), &toolrun.Round{
		Carried:   round1.Carry,
		Responses: wire.RawJSON(`{"user_name":{"action":"accept","content":{"name":"Ada"}}}`),
	}), nil)
	fmt.Println(round2.Kind, round2.Result.Content[0].(*protocol.TextContent).Text)
	// Output:
	// input_required user_name elicitation/create
	// ok Hello, Ada!
}
