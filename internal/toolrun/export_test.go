package toolrun

import "context"

// What the package's external tests reach that the server never uses:
// test files only.

// WithRound returns a context carrying r, under which [Tool.Call] runs a
// call's round: for a caller outside a server (a test), which fills r as the
// server would. The server installs its own.
func WithRound(ctx context.Context, r *Round) context.Context {
	return &roundContext{Context: ctx, round: r}
}

// roundContext is WithRound's context: it answers both round keys (roundkeys.go).
type roundContext struct {
	context.Context
	round *Round
}

func (c *roundContext) Value(key any) any {
	switch key.(type) {
	case RoundKey, RoundMadeKey:
		return c.round
	}
	return c.Context.Value(key)
}

// Key returns the input's key.
func (in Input) Key() string { return in.key }
