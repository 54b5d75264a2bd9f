package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The fixtures of the suite's input-required-result-* scenarios (SEP-2322:
// multi-round-trip tool calls). Each asks with tools.Ask; the keys, methods
// and texts are the scenarios' own. The scenarios that reuse a tool
// (missing-input-response, result-type, ignore-extra-params, validate-input
// use the elicitation one) need nothing more: re-asking a missing answer,
// ignoring extra ones and refusing malformed ones are the library's.
// input-required-result-non-tool-request concerns prompts/get, which a
// tools-only server does not serve.

// nameSchema is the form of the scenarios that ask for a name.
const nameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

// Requests the fixtures make, as the scenario descriptions spell them.
var (
	askNameForm = protocol.ElicitRequest{Message: "What is your name?", RequestedSchema: json.RawMessage(nameSchema)}
	askOK       = protocol.ElicitRequest{Message: "Please confirm",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)}
	askCapital = protocol.CreateMessageRequest{MaxTokens: 100, Messages: []protocol.SamplingMessage{
		{Role: "user", Content: &protocol.TextContent{Text: "What is the capital of France?"}}}}
	askGreeting = protocol.CreateMessageRequest{MaxTokens: 50, Messages: []protocol.SamplingMessage{
		{Role: "user", Content: &protocol.TextContent{Text: "Generate a greeting"}}}}
	askStep1 = protocol.ElicitRequest{Message: "Step 1: What is your name?", RequestedSchema: json.RawMessage(nameSchema)}
	askStep2 = protocol.ElicitRequest{Message: "Step 2: What is your favorite color?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)}
)

// inputRequiredFixtures builds the fixtures; a tool that cannot be built
// fails start-up with its error.
func inputRequiredFixtures() ([]*tools.Tool, error) {
	noArgs := []byte(noArgsSchema)
	var errs []error
	raw := func(name, description string, fn tools.RawHandler) *tools.Tool {
		t, err := tools.NewRaw(name, description, noArgs, fn)
		errs = append(errs, err)
		return t
	}
	ts := []*tools.Tool{
		raw("test_input_required_result_elicitation", "Asks the user's name (elicitation, key user_name), then greets them.",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var name protocol.ElicitResult
				if err := tools.Ask(ctx, tools.Elicit("user_name", askNameForm, &name)); err != nil {
					return nil, err
				}
				return protocol.TextResult("Hello, " + formName(&name, "name") + "!"), nil
			}),
		raw("test_input_required_result_sampling", "Asks the client's model for the capital of France (sampling, key capital_question).",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var answer protocol.CreateMessageResult
				if err := tools.Ask(ctx, tools.Sample("capital_question", askCapital, &answer)); err != nil {
					return nil, err
				}
				text, _ := answer.Text()
				return protocol.TextResult("The model answered: " + text), nil
			}),
		raw("test_input_required_result_list_roots", "Asks for the client's roots (roots/list, key client_roots) and lists them.",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var roots protocol.ListRootsResult
				if err := tools.Ask(ctx, tools.ListRoots("client_roots", &roots)); err != nil {
					return nil, err
				}
				return protocol.TextResult("Roots: " + rootList(&roots)), nil
			}),
		raw("test_input_required_result_request_state", "Keeps a value in the sealed requestState, asks for a confirmation (key confirm), then says state-ok if the value came back.",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				const key = "issued"
				var issued string
				found, err := tools.Recall(ctx, key, &issued)
				if err != nil {
					return nil, err
				}
				if !found {
					if err := tools.Remember(ctx, key, "round-1"); err != nil {
						return nil, err
					}
				}
				var ok protocol.ElicitResult
				if err := tools.Ask(ctx, tools.Elicit("confirm", askOK, &ok)); err != nil {
					return nil, err
				}
				if issued != "round-1" {
					return nil, errors.New("the requestState did not carry the value of round 1")
				}
				return protocol.TextResult("state-ok: the requestState carried round 1's value; confirmation " + ok.Action), nil
			}),
		raw("test_input_required_result_multiple_inputs", "Asks for a name (elicitation), a greeting (sampling) and the roots in one round.",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var name protocol.ElicitResult
				var greeting protocol.CreateMessageResult
				var roots protocol.ListRootsResult
				if err := tools.Ask(ctx,
					tools.Elicit("user_name", askNameForm, &name),
					tools.Sample("greeting", askGreeting, &greeting),
					tools.ListRoots("client_roots", &roots),
				); err != nil {
					return nil, err
				}
				text, _ := greeting.Text()
				return protocol.TextResult(fmt.Sprintf("%s, %s! Roots: %s", text, formName(&name, "name"), rootList(&roots))), nil
			}),
		raw("test_input_required_result_multi_round", "Asks for a name (step1), then in a second round for a color (step2).",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var step1, step2 protocol.ElicitResult
				if err := tools.Ask(ctx, tools.Elicit("step1", askStep1, &step1)); err != nil {
					return nil, err
				}
				if err := tools.Ask(ctx, tools.Elicit("step2", askStep2, &step2)); err != nil {
					return nil, err
				}
				return protocol.TextResult(formName(&step1, "name") + " likes " + formName(&step2, "color") + "."), nil
			}),
		raw("test_input_required_result_tampered_state", "Asks for a confirmation; a retry whose requestState was altered is refused (-32602).",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var ok protocol.ElicitResult
				if err := tools.Ask(ctx, tools.Elicit("confirm", askOK, &ok)); err != nil {
					return nil, err
				}
				return protocol.TextResult("confirmation " + ok.Action), nil
			}),
		raw("test_input_required_result_capabilities", "Asks only for the inputs the request's clientCapabilities cover (elicitation, sampling, roots).",
			func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
				var name protocol.ElicitResult
				var greeting protocol.CreateMessageResult
				var roots protocol.ListRootsResult
				var inputs []tools.Input
				var asked []string
				for _, in := range []struct {
					key   string
					input tools.Input
				}{
					{"user_name", tools.Elicit("user_name", askNameForm, &name)},
					{"greeting", tools.Sample("greeting", askGreeting, &greeting)},
					{"client_roots", tools.ListRoots("client_roots", &roots)},
				} {
					if tools.CanAsk(ctx, in.input) {
						inputs = append(inputs, in.input)
						asked = append(asked, in.key)
					}
				}
				if len(inputs) == 0 {
					return protocol.TextResult("The client declared none of elicitation, sampling and roots: nothing to ask."), nil
				}
				if err := tools.Ask(ctx, inputs...); err != nil {
					return nil, err
				}
				return protocol.TextResult("Answered: " + strings.Join(asked, ", ")), nil
			}),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ts, nil
}

// formName returns the string member field of an accepted form, or how the
// user answered otherwise.
func formName(r *protocol.ElicitResult, field string) string {
	if r.Action != protocol.ElicitAccept {
		return "(" + r.Action + ")"
	}
	var form map[string]any
	if err := r.DecodeContent(&form); err != nil {
		return "(unreadable)"
	}
	s, _ := form[field].(string)
	return s
}

// rootList joins the roots' URIs.
func rootList(r *protocol.ListRootsResult) string {
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return strings.Join(uris, ", ")
}
