package toolrun

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	json "github.com/goccy/go-json/v2"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// New implements tools.New, whose documentation it follows.
func New[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) (*Tool, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	inType := reflect.TypeFor[In]()
	input, isObject, err := inferObject(inType)
	if err != nil {
		return nil, fmt.Errorf("tools: tool %q: input type %s: %w", name, inType, err)
	}
	if !isObject {
		return nil, fmt.Errorf("tools: tool %q: input type %s must be a struct or a map with string keys (an input schema's root is an object)", name, inType)
	}
	var output []byte
	if outType := reflect.TypeFor[Out](); outType.Kind() != reflect.Interface {
		schema, isObject, err := inferObject(outType)
		if err != nil {
			return nil, fmt.Errorf("tools: tool %q: output type %s: %w", name, outType, err)
		}
		if isObject {
			output = schema
		}
	}
	t, _, err := build(name, description, fn == nil, input, output, true, opts)
	if err != nil {
		return nil, err
	}
	structured := output != nil
	t.run = func(ctx context.Context, raw []byte) (*protocol.CallToolResult, bool, error) {
		var in In
		if err := strictjson.Unmarshal(raw, &in); err != nil {
			return nil, true, decodeError(err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, false, err
		}
		b, err := strictjson.Marshal(out)
		if err != nil {
			return nil, false, fmt.Errorf("Tool %s returned a result that cannot be encoded as JSON", name)
		}
		text := string(b)
		res := &protocol.CallToolResult{Content: []protocol.Content{&protocol.TextContent{Text: text}}}
		if structured {
			if text == "null" {
				return nil, false, fmt.Errorf("Tool %s returned no result", name)
			}
			res.StructuredContent = wire.RawJSON(b)
		}
		return res, false, nil
	}
	return t, nil
}

// decodeError describes arguments that the schema admitted but In could not
// hold (a value out of range, a malformed date-time). It names the location
// and never the Go type: the text goes to the client.
func decodeError(err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		return fmt.Errorf("at '%s': invalid value", se.JSONPointer)
	}
	return errors.New("arguments cannot be decoded")
}
