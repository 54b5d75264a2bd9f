package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The fixtures of the suite's 2025-era scenarios that ask the client
// (tools-call-sampling, tools-call-elicitation,
// elicitation-sep1034-defaults, elicitation-sep1330-enums): each asks with
// tools.Ask, which a 2025-era client is asked on the call's own stream
// (docs/design.md §1a). The arguments, forms and texts are the scenarios'
// own. A 2026-07-28 client gets the same inputs as an input_required
// result.

// Forms the fixtures ask for.
var (
	userInfoSchema = json.RawMessage(`{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)
	// SEP-1034: a default for every primitive type.
	defaultsSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}`)
	// SEP-1330: the five enum forms.
	enumsSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
)

// legacyAskFixtures builds the fixtures.
func legacyAskFixtures() ([]*tools.Tool, error) {
	type promptIn struct {
		Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
	}
	type messageIn struct {
		Message string `json:"message" jsonschema:"The message to show the user"`
	}
	sampling, err1 := tools.New("test_sampling", "Asks the client's model to complete prompt (sampling/createMessage).",
		func(ctx context.Context, in promptIn) (string, error) {
			var res protocol.CreateMessageResult
			req := protocol.CreateMessageRequest{MaxTokens: 100, Messages: []protocol.SamplingMessage{
				{Role: "user", Content: &protocol.TextContent{Text: in.Prompt}}}}
			if err := tools.Ask(ctx, tools.Sample("sampling", req, &res)); err != nil {
				return "", err
			}
			text, _ := res.Text()
			return "LLM response: " + text, nil
		})
	elicitation, err2 := tools.New("test_elicitation", "Asks the user for a username and an email (elicitation/create).",
		func(ctx context.Context, in messageIn) (string, error) {
			return elicitText(ctx, "User response: ", protocol.ElicitRequest{Message: in.Message, RequestedSchema: userInfoSchema})
		})
	defaults, err3 := tools.New("test_elicitation_sep1034_defaults", "Asks for a form whose fields all have defaults (SEP-1034).",
		func(ctx context.Context, _ struct{}) (string, error) {
			return elicitText(ctx, "Elicitation completed: ", protocol.ElicitRequest{Message: "Please review your information", RequestedSchema: defaultsSchema})
		})
	enums, err4 := tools.New("test_elicitation_sep1330_enums", "Asks for a form with the five enum forms (SEP-1330).",
		func(ctx context.Context, _ struct{}) (string, error) {
			return elicitText(ctx, "Elicitation completed: ", protocol.ElicitRequest{Message: "Please choose your options", RequestedSchema: enumsSchema})
		})
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, err
	}
	return []*tools.Tool{sampling, elicitation, defaults, enums}, nil
}

// elicitText asks req and describes the answer after prefix:
// "action=<action>, content=<content>".
func elicitText(ctx context.Context, prefix string, req protocol.ElicitRequest) (string, error) {
	var res protocol.ElicitResult
	if err := tools.Ask(ctx, tools.Elicit("form", req, &res)); err != nil {
		return "", err
	}
	content := string(res.Content)
	if content == "" {
		content = "{}"
	}
	return prefix + "action=" + res.Action + ", content=" + content, nil
}
