package tools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/wymcp/wymcp/internal/roundctx"
	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/protocol"
)

// Round is the multi-round-trip side of one call of a tool (SEP-2322): what
// the request brings for [Ask], [CanAsk] and [Recall] to read, and what they
// and [Remember] leave for the call's [Outcome]. The server provides one
// under the handler's context, its exported fields filled from the request
// and its opened requestState (made on first use, so that a tool that never
// asks pays nothing for it); a caller of [Tool.Call] outside a server
// installs its own with [WithRound]. Without one, Ask, Remember and Recall
// return an error and CanAsk reports false.
//
// A Round serves one call: it must not be reused. Its methods are safe for
// the handler's goroutines to use concurrently.
type Round struct {
	// Responses is params.inputResponses as sent: a JSON object whose
	// members answer the previous round's input requests by key; nil when
	// the request has none.
	Responses protocol.RawJSON
	// Carried is what the call's earlier rounds left in its requestState.
	Carried Carried
	// Capabilities is the request's clientCapabilities object; nil means
	// the client declared none.
	Capabilities protocol.RawJSON

	mu sync.Mutex
	// fresh are the answers taken from Responses in this round, and kept
	// the values remembered in it: both go to the next round's state.
	fresh map[string]protocol.RawJSON
	kept  map[string]protocol.RawJSON
	// pending are the inputs asked and not answered, in the order asked.
	pending []InputRequest
	// bad is the first answer that did not decode as what it answers.
	bad *responseError
}

// Carried is what a call carries from one round to the next, sealed in its
// requestState: the answers received so far and the values remembered.
// Because a handler re-runs from the top in every round, an answer given in
// round 1 must still be there in round 3, when the client sends only round
// 2's answers; the state is where it waits.
type Carried struct {
	// Answers are the client's answers by input key, as sent.
	Answers map[string]protocol.RawJSON
	// Memory are the values [Remember] kept, by key, as JSON.
	Memory map[string]protocol.RawJSON
}

// WithRound returns a context carrying r, under which [Tool.Call] runs a
// call's round: for a caller outside a server (a test), which fills r as the
// server would. The server installs its own.
func WithRound(ctx context.Context, r *Round) context.Context {
	return &roundContext{Context: ctx, round: r}
}

// roundContext is WithRound's context: it answers both keys of roundctx.
type roundContext struct {
	context.Context
	round *Round
}

func (c *roundContext) Value(key any) any {
	switch key.(type) {
	case roundctx.Key, roundctx.Made:
		return c.round
	}
	return c.Context.Value(key)
}

// roundOf returns the call's Round, nil when the context has none. The
// server's tool context answers the key itself, and makes the Round only
// then, so a call that never asks costs nothing (see internal/roundctx).
func roundOf(ctx context.Context) *Round {
	r, _ := ctx.Value(roundctx.Key{}).(*Round)
	return r
}

// madeRound returns the call's Round if something made it already, nil
// otherwise; it makes none.
func madeRound(ctx context.Context) *Round {
	r, _ := ctx.Value(roundctx.Made{}).(*Round)
	return r
}

// errNoRound is what the multi-round-trip helpers say outside a call.
var errNoRound = errors.New("tools: no Round in the context: Ask, Remember and Recall work inside a call run by a server, or by Tool.Call under tools.WithRound")

// Remember keeps value, encoded as JSON now, for the call's later rounds
// under key: a handler that computed something before asking for input (a
// quote, a reservation id) finds it again with [Recall] when it re-runs
// with the client's answers, instead of computing it anew. It travels
// sealed in the requestState, so the client can neither read nor change it;
// it is kept only when the round ends asking for input (it is the state's
// content), and it counts toward the state's size, which the client sends
// back in every retry. A later Remember of the same key replaces the value.
func Remember(ctx context.Context, key string, value any) error {
	r := roundOf(ctx)
	if r == nil {
		return errNoRound
	}
	b, err := strictjson.Marshal(value)
	if err != nil {
		return fmt.Errorf("tools: Remember %q: %w", key, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept == nil {
		r.kept = map[string]protocol.RawJSON{}
	}
	r.kept[key] = b
	return nil
}

// Recall decodes into dst the value an earlier round (or this one) kept
// under key with [Remember], and reports whether there was one.
func Recall(ctx context.Context, key string, dst any) (bool, error) {
	r := roundOf(ctx)
	if r == nil {
		return false, errNoRound
	}
	r.mu.Lock()
	v, ok := r.kept[key]
	if !ok {
		v, ok = r.Carried.Memory[key]
	}
	r.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := strictjson.Unmarshal(v, dst); err != nil {
		return true, fmt.Errorf("tools: Recall %q: %w", key, err)
	}
	return true, nil
}

// answer returns the answer to key: one carried from an earlier round
// first (sealed, it is what the call already acted on, and the client may
// not change it), then one in this request's inputResponses (fresh).
// r.mu is held.
func (r *Round) answer(key string) (raw protocol.RawJSON, fresh, ok bool) {
	if raw, ok = r.Carried.Answers[key]; ok {
		return raw, false, true
	}
	// Looked up in place, not decoded into a map: a retry carries few
	// answers, and a map of them cost several allocations a round.
	raw, ok = strictjson.Member(r.Responses, key)
	return raw, true, ok
}

// hasCapability reports whether the request declared the top-level client
// capability name as an object.
func (r *Round) hasCapability(name string) bool {
	v, _ := strictjson.Member(r.Capabilities, name)
	return strictjson.Kind(v) == '{'
}

// carry returns what the next round must find: the carried answers and
// memory, with this round's fresh answers and kept values added.
func (r *Round) carry() Carried {
	c := Carried{Answers: maps.Clone(r.Carried.Answers), Memory: maps.Clone(r.Carried.Memory)}
	if len(r.fresh) > 0 {
		if c.Answers == nil {
			c.Answers = make(map[string]protocol.RawJSON, len(r.fresh))
		}
		maps.Copy(c.Answers, r.fresh)
	}
	if len(r.kept) > 0 {
		if c.Memory == nil {
			c.Memory = make(map[string]protocol.RawJSON, len(r.kept))
		}
		maps.Copy(c.Memory, r.kept)
	}
	return c
}
