// Package actors runs the methods of the surface on protoactor-go actors,
// per docs/design.md §4.
//
// The HTTP front (internal/transport) parses and classifies in the request
// goroutine, then asks this package (System.Ask) and gets a Reply back, a
// value: the result object's bytes or a *wire.Error. It knows no id and no
// envelope; the front frames and writes every answer. Behind Ask:
//
//   - A supervisor actor owns the method workers of server/discover and
//     tools/list — a small pool per method, so no method is a one-goroutine
//     bottleneck — which answer from bytes precomputed at build time, on the
//     sender's goroutine (a synchronized dispatcher: handing over bytes costs
//     less than a hand-off to another goroutine).
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
//   - The tool's deadline has one owner, here: Ask bounds the tool's context
//     by it (toolContext, which makes no timer unless the tool waits on
//     Done), and one watchdog goroutine answers for a tool that ignores it,
//     deadlineGrace past the deadline, through the front's LateWriter, with
//     the tool's one timeout answer (toolrun.Tool.DeadlineOutcome). Such a tool
//     still holds its request's goroutine and in-flight place until it
//     returns: Go cannot stop it from outside.
//   - The containment strategy turns a fault past a method into the -32603
//     "Internal error" reply, records the crash reason (a toolrun.Fault, with
//     the stack its mailbox captured) on the span and the log, then
//     restarts the worker. It never stops a method for good, however many
//     faults arrive (protoactor's default strategy stops an actor after ten
//     failures in ten seconds), and it never leaves a requester waiting for a
//     reply that will not come.
//
// The reply is kept in the Call, not sent on a protoactor Future: a Future
// cannot be cancelled by a context and costs a registry entry and a timer
// per request (docs/design.md §9), and since the worker runs on the
// requester's goroutine the reply is almost always there when Send
// returns; a channel is made only when the requester must wait.
package actors
