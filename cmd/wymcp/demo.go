package main

import (
	"context"
	"encoding/json"

	"errors"
	"fmt"
	"time"

	gojson "github.com/goccy/go-json/v2"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The demo tool set: one tool per thing worth showing — a raw tool, a typed
// tool with structured output, a long call that honours cancellation, a
// call that asks the user a question (a multi-round-trip call), and each of
// the three failure paths of docs/design.md §5 (a tool error, a tool panic
// contained by the tool runner, a fault after the tool returned contained
// by the supervisor).

// echoSchema is kept byte-for-byte in tools/list (raw tools keep theirs).
const echoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"Text to echo back"}},"required":["text"],"additionalProperties":false}`

// sleepSchema bounds ms to 50 s, so that the longest sleep ends within the
// default tool deadline (60 s), and with it within the default
// -shutdown-timeout (65 s): a stop on SIGTERM waits for every sleep rather
// than cutting it short. The typed inference has no minimum or maximum,
// hence a raw tool.
const sleepSchema = `{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":50000,"description":"How long to sleep, in milliseconds (0 to 50000)"}},"required":["ms"],"additionalProperties":false}`

// noArgsSchema is the input schema of a tool that takes no arguments.
const noArgsSchema = `{"type":"object","additionalProperties":false}`

type addIn struct {
	A float64 `json:"a" jsonschema:"First addend"`
	B float64 `json:"b" jsonschema:"Second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

func demoTools() ([]*tools.Tool, error) {
	readOnly := protocol.ToolAnnotations{ReadOnlyHint: new(true), DestructiveHint: new(false), IdempotentHint: new(true), OpenWorldHint: new(false)}
	closed := protocol.ToolAnnotations{OpenWorldHint: new(false)}
	var errs []error
	add := func(t *tools.Tool, err error) *tools.Tool {
		errs = append(errs, err)
		return t
	}
	ts := []*tools.Tool{
		add(tools.NewRaw("echo", "Echoes the given text back as one text block.",
			[]byte(echoSchema), echo, tools.WithAnnotations(readOnly))),
		add(tools.New("add", "Adds two numbers and returns the sum as structured content.",
			func(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil },
			tools.WithAnnotations(readOnly))),
		add(tools.NewRaw("sleep", "Sleeps for ms milliseconds, reporting progress in tenths, then says so; stops early if the call is cancelled.",
			[]byte(sleepSchema), sleep,
			// The default deadline, 60 s: longer than the longest sleep, so
			// the schema's bound is the limit.
			tools.WithAnnotations(readOnly))),
		add(tools.NewRaw("ask_name", "Asks for your name (an elicitation: the client shows a form), then greets you. Needs the client's elicitation capability.",
			[]byte(noArgsSchema), askName,
			tools.WithAnnotations(readOnly),
			// Refused up front (-32021) for a client that cannot answer.
			tools.WithRequiredCapabilities("elicitation"))),
		add(tools.NewRaw("fail", "Always fails: shows a tool error answered as an isError result.",
			[]byte(noArgsSchema), func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return nil, errors.New("this tool always fails")
			}, tools.WithAnnotations(closed))),
		add(tools.NewRaw("panic", "Always panics: shows tool containment (an isError result, the server keeps running).",
			[]byte(noArgsSchema), func(context.Context, []byte) (*protocol.CallToolResult, error) {
				panic("demo: the panic tool panicked")
			}, tools.WithAnnotations(closed))),
		add(tools.NewRaw("bad_result", "Returns a result that faults while it is encoded: shows supervisor containment (JSON-RPC -32603).",
			[]byte(noArgsSchema), func(context.Context, []byte) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{
					Content:           []protocol.Content{&protocol.TextContent{Text: "never sent"}},
					StructuredContent: explosive{},
				}, nil
			}, tools.WithAnnotations(closed))),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ts, nil
}

func echo(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := gojson.Unmarshal(args, &in); err != nil {
		return nil, errors.New("arguments cannot be decoded")
	}
	return protocol.TextResult(in.Text), nil
}

func sleep(ctx context.Context, args []byte) (*protocol.CallToolResult, error) {
	var in struct {
		MS int64 `json:"ms"`
	}
	if err := gojson.Unmarshal(args, &in); err != nil {
		return nil, errors.New("arguments cannot be decoded")
	}
	// Progress in tenths of the sleep, in milliseconds slept; a client that
	// sent a progressToken and reads streams sees them as notifications.
	total := float64(in.MS)
	tools.ReportProgress(ctx, 0, &total, "sleeping")
	step := time.Duration(in.MS) * time.Millisecond / 10
	for i := 1; i <= 10; i++ {
		t := time.NewTimer(step)
		select {
		case <-t.C:
			tools.ReportProgress(ctx, total*float64(i)/10, &total, "sleeping")
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("sleep interrupted: %w", context.Cause(ctx))
		}
	}
	return protocol.TextResult(fmt.Sprintf("slept %d ms", in.MS)), nil
}

// demoNameForm is ask_name's question: a one-field form.
var demoNameForm = protocol.ElicitRequest{
	Message:         "What should I call you?",
	RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name","minLength":1,"maxLength":100}},"required":["name"]}`),
}

// askName asks the user's name through the client. The first call returns
// tools.Ask's ErrInputRequired, which the server answers with an
// input_required result and a sealed requestState; the client asks the
// user and retries the call with the answer, and this handler runs again
// from the top, where Ask now returns the answer. Nothing waits in between.
func askName(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
	var answer protocol.ElicitResult
	if err := tools.Ask(ctx, tools.Elicit("name", demoNameForm, &answer)); err != nil {
		return nil, err
	}
	if answer.Action != protocol.ElicitAccept {
		return protocol.TextResult("Hello, whoever you are (you chose to " + answer.Action + ")."), nil
	}
	var form struct {
		Name string `json:"name"`
	}
	if err := answer.DecodeContent(&form); err != nil || form.Name == "" {
		return nil, errors.New("the answer holds no name")
	}
	return protocol.TextResult("Hello, " + form.Name + "!"), nil
}

// explosive panics when encoded. The tool returns it without trouble; the
// fault happens later, when the method actor encodes the answer, outside the
// tool runner's recover — the supervisor's case.
type explosive struct{}

// MarshalJSON implements json.Marshaler by panicking.
func (explosive) MarshalJSON() ([]byte, error) {
	panic("demo: bad_result's structured content cannot be encoded")
}
