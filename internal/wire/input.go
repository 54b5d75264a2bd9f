package wire

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/wymcp/wymcp/protocol"
)

// The requests a tool may make of the client within a call (SEP-2322): in
// revision 2026-07-28 the server sends no requests of its own, so these
// travel inside an input_required result and the client answers them in its
// retry of the call.
const (
	// MethodElicit asks the user to fill in a form.
	MethodElicit = "elicitation/create"
	// MethodSample asks the client's model for a completion.
	MethodSample = "sampling/createMessage"
	// MethodListRoots asks for the client's roots.
	MethodListRoots = "roots/list"
)

// ElicitParams returns the params of an elicitation/create in form mode,
// which is named explicitly.
func ElicitParams(r protocol.ElicitRequest) (RawJSON, error) {
	if len(r.RequestedSchema) == 0 {
		return nil, errors.New("an elicitation needs a RequestedSchema")
	}
	return Marshal(struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}{"form", r.Message, r.RequestedSchema})
}

// LegacyInputParams returns the params of an input request as the 2025
// revision version spells them: 2025-06-18's elicitation/create has no
// mode (form mode, the only one it knows, is implied).
func LegacyInputParams(method string, params RawJSON, version string) RawJSON {
	const formMode = `{"mode":"form",`
	if version == Version20250618 && method == MethodElicit && strings.HasPrefix(string(params), formMode) {
		return append(RawJSON{'{'}, params[len(formMode):]...)
	}
	return params
}

// SamplingParams returns the params of a sampling/createMessage: r with
// each message's content block in its wire form.
func SamplingParams(r protocol.CreateMessageRequest) (RawJSON, error) {
	type message struct {
		Role    string  `json:"role"`
		Content RawJSON `json:"content"`
	}
	msgs := make([]message, len(r.Messages))
	for i, m := range r.Messages {
		c, err := MarshalContent(m.Content)
		if err != nil {
			return nil, err
		}
		msgs[i] = message{m.Role, c}
	}
	return Marshal(struct {
		Messages         []message                  `json:"messages"`
		MaxTokens        int                        `json:"maxTokens"`
		SystemPrompt     string                     `json:"systemPrompt,omitempty"`
		Temperature      *float64                   `json:"temperature,omitempty"`
		StopSequences    []string                   `json:"stopSequences,omitempty"`
		ModelPreferences *protocol.ModelPreferences `json:"modelPreferences,omitempty"`
		Metadata         map[string]any             `json:"metadata,omitempty"`
	}{msgs, r.MaxTokens, r.SystemPrompt, r.Temperature, r.StopSequences, r.ModelPreferences, r.Metadata})
}
