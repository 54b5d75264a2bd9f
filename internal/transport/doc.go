// Package transport is the net/http edge of wymcp: the request path of
// DESIGN §3, stage by stage, and the one writer that answers.
//
// Each stage returns a *rejection or hands on; no stage writes. writeRejection
// maps a rejection to its status, headers and JSON-RPC body (DESIGN §5),
// records it (DESIGN §7), then writes — so the ladder reads top-down in
// Handler.ServeHTTP and every refusal has one shape. A method's reply is
// answered 200, but for -32021, which the spec pins to 400 wherever it
// arises (replyStatus).
package transport
