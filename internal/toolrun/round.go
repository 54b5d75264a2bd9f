package toolrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/wire"
)

// Round is the multi-round-trip side of one call of a tool (SEP-2322): what
// the request brings for [Ask], [CanAsk] and [Recall] to read, and what they
// and [Remember] leave for the call's [Outcome]. The server provides one
// under the handler's context, its exported fields filled from the request
// and its opened requestState (made on first use, so that a tool that never
// asks pays nothing for it). Without one, Ask, Remember and Recall
// return an error and CanAsk reports false.
//
// A Round serves one call: it must not be reused. Its methods are safe for
// the handler's goroutines to use concurrently.
type Round struct {
	// Responses is params.inputResponses as sent: a JSON object whose
	// members answer the previous round's input requests by key; nil when
	// the request has none.
	Responses wire.RawJSON
	// Carried is what the call's earlier rounds left in its requestState.
	Carried Carried
	// Capabilities is the request's clientCapabilities object; nil means
	// the client declared none.
	Capabilities wire.RawJSON

	mu sync.Mutex
	// fresh are the answers taken from Responses in this round, and kept
	// the values remembered in it: both go to the next round's state.
	fresh map[string]wire.RawJSON
	kept  map[string]wire.RawJSON
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
	Answers map[string]wire.RawJSON
	// Memory are the values [Remember] kept, by key, as JSON.
	Memory map[string]wire.RawJSON
}

// roundOf returns the call's Round, nil when the context has none. The
// server's tool context answers the key itself, and makes the Round only
// then, so a call that never asks costs nothing (see RoundKey).
func roundOf(ctx context.Context) *Round {
	r, _ := ctx.Value(RoundKey{}).(*Round)
	return r
}

// madeRound returns the call's Round if something made it already, nil
// otherwise; it makes none.
func madeRound(ctx context.Context) *Round {
	r, _ := ctx.Value(RoundMadeKey{}).(*Round)
	return r
}

// errNoRound is what the multi-round-trip helpers say outside a call.
var errNoRound = errors.New("tools: not within a call of a tool: Ask, Remember and Recall work inside a call the server runs")

// Remember implements tools.Remember, whose documentation it follows.
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
		r.kept = map[string]wire.RawJSON{}
	}
	r.kept[key] = b
	return nil
}

// Recall implements tools.Recall, whose documentation it follows.
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
func (r *Round) answer(key string) (raw wire.RawJSON, fresh, ok bool) {
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
			c.Answers = make(map[string]wire.RawJSON, len(r.fresh))
		}
		maps.Copy(c.Answers, r.fresh)
	}
	if len(r.kept) > 0 {
		if c.Memory == nil {
			c.Memory = make(map[string]wire.RawJSON, len(r.kept))
		}
		maps.Copy(c.Memory, r.kept)
	}
	return c
}
