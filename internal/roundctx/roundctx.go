// Package roundctx names the context key under which a tools/call's
// *tools.Round travels to the tool's handler.
//
// The key lives here, not in package tools, so that the server's own tool
// context (internal/actors) can answer it from the call it already holds:
// installing the Round with context.WithValue would cost every tools/call an
// allocation, for the few tools that ask the client for input. tools.WithRound
// uses the same key for callers outside a server.
package roundctx

// Key is the context key of a call's *tools.Round.
type Key struct{}
