package toolrun

// RoundKey asks a context for the call's *Round, made if need be.
//
// The server's own tool context (internal/actors) answers it from the call
// it already holds: installing the Round with context.WithValue would cost
// every tools/call an allocation, and making the Round itself another, for
// the few tools that ask the client for input. That context makes the Round
// on the first ask for RoundKey, from the request.
type RoundKey struct{}

// RoundMadeKey asks a context for the call's *Round only if it exists
// already; the answer is a nil *Round otherwise. [Tool.Call] uses it to
// learn whether a handler touched the Round without making one.
type RoundMadeKey struct{}
