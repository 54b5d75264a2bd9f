package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/protocol"
)

// ErrInputRequired is what [Ask] returns while the client has not answered
// every input it names. A handler returns it as it is (or wrapped):
// [Tool.Call] then answers the call with an input_required result that asks
// the client for every input still unanswered, and the client retries the
// call with its answers. Test for it with errors.Is.
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
	// params is the request's params, encoded only when the input is asked.
	params any
	// decode checks an answer and stores it in the caller's result.
	decode func(protocol.RawJSON) error
	err    error
}

// Key returns the input's key.
func (in Input) Key() string { return in.key }

// Method returns the method of the request the input makes.
func (in Input) Method() string { return in.method }

// InputRequest is one input a call is waiting for: an entry of the
// input_required result's inputRequests.
type InputRequest struct {
	// Key is the input's key, which the client's answer is keyed by.
	Key string
	// Method is the request's method (protocol.MethodElicit, …).
	Method string
	// Capability is the client capability the request needs ("elicitation",
	// "sampling" or "roots"): the server refuses to ask a client that did
	// not declare it (-32021).
	Capability string
	// Params is the request's params, encoded.
	Params protocol.RawJSON
}

// Elicit is an input that asks the user to fill in a form
// (elicitation/create, form mode; needs the client's "elicitation"
// capability). Once answered, dst holds the answer: Action says whether the
// user accepted, and DecodeContent reads the form.
func Elicit(key string, req protocol.ElicitRequest, dst *protocol.ElicitResult) Input {
	in := newInput(key, protocol.MethodElicit, "elicitation", req, dst == nil)
	if in.err == nil && len(req.RequestedSchema) == 0 {
		in.err = fmt.Errorf("tools: Elicit %q: the request has no RequestedSchema", key)
	}
	in.decode = func(raw protocol.RawJSON) error {
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

// Sample is an input that asks the client's model for a completion
// (sampling/createMessage; needs the client's "sampling" capability). Once
// answered, dst holds the sampled message; Text reads a text answer.
func Sample(key string, req protocol.CreateMessageRequest, dst *protocol.CreateMessageResult) Input {
	in := newInput(key, protocol.MethodSample, "sampling", req, dst == nil)
	in.decode = func(raw protocol.RawJSON) error {
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

// ListRoots is an input that asks for the client's roots (roots/list;
// needs the client's "roots" capability). Once answered, dst holds them.
func ListRoots(key string, dst *protocol.ListRootsResult) Input {
	in := newInput(key, protocol.MethodListRoots, "roots", struct{}{}, dst == nil)
	in.decode = func(raw protocol.RawJSON) error {
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
func newInput(key, method, capability string, params any, nilDst bool) Input {
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

// Ask asks the client for inputs, within a call of a tool. It returns nil
// once the client has answered every one of them — each answer is then in
// the result its Input was made with — and otherwise [ErrInputRequired],
// which the handler returns: the call is answered with an input_required
// result naming the inputs not yet answered (all of them, however many Ask
// calls named them), and the client retries the call with its answers.
//
//	var name protocol.ElicitResult
//	if err := tools.Ask(ctx, tools.Elicit("name", askName, &name)); err != nil {
//		return nil, err
//	}
//
// # The model: the handler runs again
//
// No goroutine waits for the client between rounds: the server keeps no
// state (any replica may serve the retry). Each retry runs the handler again
// from the top, with the answers of every round so far — those of earlier
// rounds travel sealed in the requestState, the latest in the retry — so
// that Ask returns nil where it asked before, and the handler goes on to
// its next Ask, or to its result. Hence:
//
//   - Side effects before an Ask run once per round: make them idempotent,
//     or move them after the last Ask.
//   - Values a later round needs that cannot be recomputed alike (a price
//     quoted, an id made) go through [Remember] and [Recall].
//   - Several inputs in one Ask are asked in one round; Asks one after the
//     other are rounds one after the other.
//   - An answer is given once: an answer sealed in an earlier round wins
//     over the same key sent again.
//   - Each round is one tools/call with its own deadline and progress
//     stream; the state's TTL (wymcp.Options.StateTTL) bounds the time
//     between rounds, and a state may be replayed within it: a side effect
//     that must happen once needs its own guard.
//
// An answer that is not a valid result of the request it answers (not an
// object, an unknown elicitation action) is a malformed request: the call
// is refused with -32602, whatever the handler returns. Asking for an input
// whose capability the request did not declare is refused with -32021
// (see [CanAsk]). Ask returns other errors for a programming error: an
// input without a key or a result pointer, params that cannot be encoded,
// no [Round] in ctx.
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
				r.fresh = map[string]protocol.RawJSON{}
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
	params, err := strictjson.Marshal(in.params)
	if err != nil {
		return fmt.Errorf("tools: input %q: its params cannot be encoded: %w", in.key, err)
	}
	r.pending = append(r.pending, InputRequest{Key: in.key, Method: in.method, Capability: in.capability, Params: params})
	return nil
}

// CanAsk reports whether the request declared the client capability in
// needs, so that a handler can do without an input the client cannot give
// (asking for it anyway is refused with -32021, as the spec requires:
// servers MUST NOT send input requests the client has not declared).
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
