// Package actors runs the methods of the surface on protoactor-go actors,
// per DESIGN §4.
//
// The HTTP front (package transport) parses and classifies in the request
// goroutine, then asks this package for an answer: on that goroutine, with a
// reply that the request's context can cancel. Behind that:
//
//   - A supervisor actor owns the method workers of server/discover and
//     tools/list — a small pool per method, so no method is a one-goroutine
//     bottleneck — which answer from bytes precomputed at build time, on the
//     sender's goroutine (a synchronized dispatcher: copying bytes costs less
//     than a hand-off).
//   - Each tools/call takes a call worker of its own for as long as it runs,
//     from a pool that grows under load and keeps its idle workers (callPool),
//     so a tool that sleeps for ten seconds delays no other call and no call
//     pays for spawning an actor. Call workers run on the request's goroutine,
//     which would otherwise only wait (the hand-off to another goroutine cost
//     two context switches per call and most of the tail under load); their
//     guardian carries the same containment strategy as the supervisor.
//   - A tools/call may be one round of a multi-round-trip call (SEP-2322,
//     rounds.go): the method opens a retry's sealed requestState before the
//     tool runs, and answers a tool that asks the client for input with an
//     input_required result and a new state. Between rounds nothing is kept:
//     any server holding the key ring serves the next round.
//   - A tool that ignores its deadline is answered for by one watchdog
//     goroutine, deadlineGrace past the deadline, through Call.Late; it still
//     holds its request's goroutine and in-flight place until it returns, as
//     Go cannot stop it from outside.
//   - The containment strategy turns a fault past a method into a -32603
//     "Internal error" reply carrying the request id, records the crash
//     reason (with the stack a receiver middleware captured) on the span and
//     the log, then restarts a pool worker or stops a per-call actor. It never
//     stops a method for good, however many faults arrive (protoactor's
//     default strategy stops an actor after ten failures in ten seconds), and
//     it never leaves a requester waiting for a reply that will not come.
//
// Replies travel on a one-slot channel owned by the call, not on a
// protoactor Future: a Future cannot be cancelled by a context and costs a
// registry entry and a timer per request (notes/dependencies.md §2).
package actors
