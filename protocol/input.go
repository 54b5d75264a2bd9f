package protocol

import (
	"encoding/json"
	"errors"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// ElicitRequest is the params of an elicitation/create in form mode: a
// message for the user and the form, a flat object schema whose properties
// are strings, numbers, booleans or enums (schema ElicitRequestFormParams).
type ElicitRequest struct {
	// Message tells the user what is asked and why.
	Message string
	// RequestedSchema is the form: {"type":"object","properties":{…}} with
	// optional "required", as JSON. It is sent as it is.
	RequestedSchema json.RawMessage
}

// The actions of an [ElicitResult].
const (
	// ElicitAccept: the user submitted the form; Content holds it.
	ElicitAccept = "accept"
	// ElicitDecline: the user explicitly declined.
	ElicitDecline = "decline"
	// ElicitCancel: the user dismissed the form without choosing.
	ElicitCancel = "cancel"
)

// ElicitResult is the client's answer to an elicitation/create.
type ElicitResult struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string `json:"action"`
	// Content is the submitted form, a JSON object, when Action is
	// ElicitAccept; nil otherwise.
	Content json.RawMessage `json:"content,omitempty"`
	Meta    map[string]any  `json:"_meta,omitempty"`
}

// DecodeContent decodes the submitted form into v by the rules the server
// reads every request with (strict JSON: duplicate names and invalid UTF-8 are errors). The form's values are what the
// user typed: check them as any other input.
func (r *ElicitResult) DecodeContent(v any) error {
	if len(r.Content) == 0 {
		return errors.New("protocol: the elicitation has no content (the user did not accept)")
	}
	return strictjson.Unmarshal(r.Content, v)
}

// CreateMessageRequest is the params of a sampling/createMessage: the
// conversation to complete and how (schema CreateMessageRequestParams).
type CreateMessageRequest struct {
	Messages []SamplingMessage `json:"messages"`
	// MaxTokens bounds the completion; the client may sample fewer.
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// Metadata is passed to the model provider as it is.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SamplingMessage is one turn of a conversation to sample from.
type SamplingMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is a *TextContent, *ImageContent or *AudioContent.
	Content Content `json:"content"`
}

// ModelPreferences are the server's hints for the client's choice of model;
// each priority is in 0..1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or a family of models ("claude-3-5-sonnet",
// "sonnet").
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageResult is the client's answer to a sampling/createMessage.
type CreateMessageResult struct {
	// Role is the role of the sampled message, usually "assistant".
	Role string `json:"role"`
	// Content is the sampled content as sent: one content block (an object)
	// or several (an array). Text reads a text block.
	Content json.RawMessage `json:"content"`
	// Model names the model that sampled.
	Model string `json:"model"`
	// StopReason is why sampling stopped ("endTurn", "stopSequence",
	// "maxTokens", …), "" when unknown.
	StopReason string         `json:"stopReason,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// Text returns the text of the sampled content when it is one text block
// (or an array of one), and false otherwise.
func (r *CreateMessageResult) Text() (string, bool) {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one block
	if err := strictjson.Unmarshal(r.Content, &one); err == nil {
		return one.Text, one.Type == "text"
	}
	var many []block
	if err := strictjson.Unmarshal(r.Content, &many); err == nil && len(many) == 1 {
		return many[0].Text, many[0].Type == "text"
	}
	return "", false
}

// Root is a directory or file the client lets the server work on.
type Root struct {
	// URI is the root's URI; in 2026-07-28 a file:// URI.
	URI string `json:"uri"`
	// Name is a display name, "" when none.
	Name string         `json:"name,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to a roots/list.
type ListRootsResult struct {
	Roots []Root         `json:"roots"`
	Meta  map[string]any `json:"_meta,omitempty"`
}
