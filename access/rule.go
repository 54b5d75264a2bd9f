package access

import (
	"context"
	"encoding/json"
)

// Rule decides whether a caller may see a tool in its tools/list and call
// it. Every rule that applies to a tool (its view's, its upstream's, its
// own) must allow; a tool one of them denies is left out of the caller's
// tools/list, and a call of it is answered as the call of a tool the
// server does not have (docs/design.md §5, §11).
//
// Allow is called concurrently, on the request's goroutine, and must be
// safe for that; it must not keep req or anything it points to. A rule
// that returns an error, or panics, denies: the server logs why and goes
// on serving. ctx is the request's, done when the client goes away.
//
// For tools/list, req.Listing is true and req.Args nil: a rule whose
// answer depends on the arguments must allow then (the call decides), or
// the tool is never listed.
type Rule interface {
	Allow(ctx context.Context, req *Request) (bool, error)
}

// RuleFunc adapts a function to [Rule].
type RuleFunc func(ctx context.Context, req *Request) (bool, error)

// Allow calls f(ctx, req).
func (f RuleFunc) Allow(ctx context.Context, req *Request) (bool, error) { return f(ctx, req) }

// Request is what a rule decides on. It is read-only.
type Request struct {
	// Caller is who asks: nil when the server has no authenticator.
	Caller *Caller
	// Tool is the tool asked for.
	Tool *Tool
	// Args are the call's arguments as the client sent them (a JSON
	// object, not yet validated against the tool's input schema); nil
	// when listing, or when the call sent none.
	Args json.RawMessage
	// Listing is true when the question is whether the tool is in the
	// caller's tools/list, false for a tools/call.
	Listing bool
}

// Caller is an authenticated caller as the server's authenticator
// established it (wymcp.Principal). It is read-only: one value may serve
// many requests.
type Caller struct {
	// Subject is the token's sub, "" when it has none.
	Subject string
	// ClientID is the OAuth client the token was issued to, "" when
	// unknown.
	ClientID string
	// Scopes are the scopes granted to the caller.
	Scopes []string
	// Claims are every claim of the token (or member of the
	// introspection answer) as decoded JSON; nil when the authenticator
	// gives none.
	Claims map[string]any
}

// Tool is the tool a rule decides on.
type Tool struct {
	// Name is the served name: what the client lists and calls.
	Name string
	// Upstream is the name of the upstream that serves the tool, "" for a
	// tool of the server's own.
	Upstream string
	// Annotations are the tool's hints as tools/list shows them, by their
	// JSON names (readOnlyHint, destructiveHint, idempotentHint,
	// openWorldHint as bool, title as string); a hint not given is not a
	// member. Never nil.
	Annotations map[string]any
}
