// Package echotool is the tool every wymcp server of the bench serves, and
// the in-process benchmarks call: cmd/wymcp's demo echo (the same schema,
// the same answer), as a raw tool, so that what is measured is the
// library's raw-bytes path and not a copy that could drift between them.
package echotool

import (
	"context"
	"errors"

	json "github.com/goccy/go-json/v2"

	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// Schema is the input schema of cmd/wymcp's demo echo.
const Schema = `{"type":"object","properties":{"text":{"type":"string","description":"Text to echo back"}},"required":["text"],"additionalProperties":false}`

// New returns the echo tool: {"text": s} → one text block s.
func New() *tools.Tool {
	return tools.Must(tools.NewRaw("echo", "Echoes the given text back as one text block.", []byte(Schema), echo))
}

func echo(_ context.Context, args []byte) (*protocol.CallToolResult, error) {
	var in struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, errors.New("arguments cannot be decoded")
	}
	return protocol.TextResult(in.Text), nil
}
