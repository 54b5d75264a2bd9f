// Package transport is the net/http edge of wymcp: the request path of
// docs/design.md §3, stage by stage, and the one place that writes answers.
//
// Each stage returns a value: a *rejection (an answer before a method runs)
// or what the next stage needs; no stage writes. The methods return an
// actors.Reply, a value with no id and no envelope. Every JSON-RPC message
// the server sends is framed in envelope.go, with the request's id, and
// written here: a rejection by writeRejection (status, headers, the error,
// recorded first, docs/design.md §7), a reply by writeAnswer, a tools/call's
// answer, its progress notifications and a late answer for a stubborn tool
// through its responder, which serializes them. So the ladder reads top-down
// in Handler.ServeHTTP and every answer has one shape. A method's reply is
// answered 200, but for -32021, which the spec pins to 400 wherever it
// arises (replyStatus).
package transport
