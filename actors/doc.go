// Package actors runs the methods of the surface on protoactor-go actors,
// per DESIGN §4.
//
// The HTTP front (package transport) parses and classifies in the request
// goroutine, then asks this package for an answer and waits on a reply that
// the request's context can cancel. Behind that:
//
//   - A supervisor actor owns the method workers of server/discover and
//     tools/list — a small pool per method, so no method is a one-goroutine
//     bottleneck — and answers them from bytes precomputed at build time.
//   - Each tools/call runs in an actor of its own, so a tool that sleeps for
//     ten seconds delays no other call. Its guardian carries the same
//     containment strategy as the supervisor.
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
