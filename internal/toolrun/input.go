package toolrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// ErrInputRequired implements tools.ErrInputRequired, whose documentation it follows.
var ErrInputRequired = errors.New("tools: input required from the client")

// Input is one request for the client's input, made with [Elicit], [Sample]
// or [ListRoots] and asked with [Ask]. Its key names it in the
// input_required result and in the client's answer; keys are the handler's
// to choose and must be unique within the call.
type Input struct {
	key string
	// method is the request's method, capability the client capability
	// it needs (the top-level key of clientCapabilities).
	method, capability string
	// params encodes the request's params, only when the input is asked.
	params func() (wire.RawJSON, error)
	// decode checks an answer and stores it in the caller's result.
	decode func(wire.RawJSON) error
	err    error
}

// InputRequest is one input a call is waiting for: an entry of the
// input_required result's inputRequests.
type InputRequest struct {
	// Key is the input's key, which the client's answer is keyed by.
	Key string
	// Method is the request's method (wire.MethodElicit, …).
	Method string
	// Capability is the client capability the request needs ("elicitation",
	// "sampling" or "roots"): the server refuses to ask a client that did
	// not declare it (-32021).
	Capability string
	// Params is the request's params, encoded.
	Params wire.RawJSON
}

// Elicit implements tools.Elicit, whose documentation it follows.
func Elicit(key string, req protocol.ElicitRequest, dst *protocol.ElicitResult) Input {
	in := newInput(key, wire.MethodElicit, "elicitation", func() (wire.RawJSON, error) { return wire.ElicitParams(req) }, dst == nil)
	if in.err == nil && len(req.RequestedSchema) == 0 {
		in.err = fmt.Errorf("tools: Elicit %q: the request has no RequestedSchema", key)
	}
	in.decode = func(raw wire.RawJSON) error {
		var res protocol.ElicitResult
		if err := strictjson.Unmarshal(raw, &res); err != nil {
			return err
		}
		switch res.Action {
		case protocol.ElicitAccept, protocol.ElicitDecline, protocol.ElicitCancel:
		default:
			return errors.New("action is not accept, decline or cancel")
		}
		if res.Content != nil && strictjson.Kind(res.Content) != '{' {
			return errors.New("content is not an object")
		}
		*dst = res
		return nil
	}
	return in
}

// Sample implements tools.Sample, whose documentation it follows.
func Sample(key string, req protocol.CreateMessageRequest, dst *protocol.CreateMessageResult) Input {
	in := newInput(key, wire.MethodSample, "sampling", func() (wire.RawJSON, error) { return wire.SamplingParams(req) }, dst == nil)
	in.decode = func(raw wire.RawJSON) error {
		var res protocol.CreateMessageResult
		if err := strictjson.Unmarshal(raw, &res); err != nil {
			return err
		}
		if res.Role == "" {
			return errors.New("role is missing")
		}
		if k := strictjson.Kind(res.Content); k != '{' && k != '[' {
			return errors.New("content is not a content block or an array of them")
		}
		*dst = res
		return nil
	}
	return in
}

// ListRoots implements tools.ListRoots, whose documentation it follows.
func ListRoots(key string, dst *protocol.ListRootsResult) Input {
	in := newInput(key, wire.MethodListRoots, "roots", func() (wire.RawJSON, error) { return wire.RawJSON("{}"), nil }, dst == nil)
	in.decode = func(raw wire.RawJSON) error {
		var res protocol.ListRootsResult
		if err := strictjson.Unmarshal(raw, &res); err != nil {
			return err
		}
		if res.Roots == nil {
			return errors.New("roots is missing")
		}
		for i, root := range res.Roots {
			if root.URI == "" {
				return fmt.Errorf("root %d has no uri", i)
			}
		}
		*dst = res
		return nil
	}
	return in
}

// newInput checks what every input needs.
func newInput(key, method, capability string, params func() (wire.RawJSON, error), nilDst bool) Input {
	in := Input{key: key, method: method, capability: capability, params: params}
	switch {
	case key == "":
		in.err = fmt.Errorf("tools: a %s input needs a key", method)
	case !utf8.ValidString(key):
		in.err = fmt.Errorf("tools: input key %q is not valid UTF-8", key)
	case nilDst:
		in.err = fmt.Errorf("tools: input %q: nil result pointer", key)
	}
	return in
}

// Ask implements tools.Ask, whose documentation it follows.
func Ask(ctx context.Context, inputs ...Input) error {
	r := roundOf(ctx)
	if r == nil {
		return errNoRound
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	missing := false
	for _, in := range inputs {
		if in.err != nil {
			return in.err
		}
		raw, fresh, ok := r.answer(in.key)
		if !ok {
			if err := r.ask(in); err != nil {
				return err
			}
			missing = true
			continue
		}
		if err := in.decode(raw); err != nil {
			e := &responseError{key: in.key, method: in.method, why: err.Error()}
			if r.bad == nil {
				r.bad = e
			}
			return e
		}
		if fresh {
			if r.fresh == nil {
				r.fresh = map[string]wire.RawJSON{}
			}
			r.fresh[in.key] = raw
		}
	}
	if missing {
		// The sentinel itself, not wrapped with the keys: the outcome names
		// them, and a round that asks costs no error allocation.
		return ErrInputRequired
	}
	return nil
}

// ask adds in to the pending inputs, unless its key is pending already.
// r.mu is held.
func (r *Round) ask(in Input) error {
	if slices.ContainsFunc(r.pending, func(p InputRequest) bool { return p.Key == in.key }) {
		return nil
	}
	params, err := in.params()
	if err != nil {
		return fmt.Errorf("tools: input %q: its params cannot be encoded: %w", in.key, err)
	}
	r.pending = append(r.pending, InputRequest{Key: in.key, Method: in.method, Capability: in.capability, Params: params})
	return nil
}

// CanAsk implements tools.CanAsk, whose documentation it follows.
func CanAsk(ctx context.Context, in Input) bool {
	r := roundOf(ctx)
	return r != nil && r.hasCapability(in.capability)
}

// responseError is Ask's error for an answer that does not decode as the
// result of what it answers.
type responseError struct {
	key, method, why string
}

func (e *responseError) Error() string {
	return fmt.Sprintf("tools: inputResponses[%q] is not a valid %s result: %s", e.key, e.method, e.why)
}
