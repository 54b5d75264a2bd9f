// Package roundctx names the context keys under which a tools/call's
// *tools.Round travels to the tool's handler.
//
// The keys live here, not in package tools, so that the server's own tool
// context (internal/actors) can answer them from the call it already holds:
// installing the Round with context.WithValue would cost every tools/call an
// allocation, and making the Round itself another, for the few tools that
// ask the client for input. The server's context makes the Round on the
// first ask for Key, from the request; Made lets tools.Call learn whether a
// handler touched it without making one. tools.WithRound answers both for
// callers outside a server.
package roundctx

// Key asks a context for the call's *tools.Round, made if need be.
type Key struct{}

// Made asks a context for the call's *tools.Round only if it exists
// already; the answer is a nil *tools.Round otherwise.
type Made struct{}
