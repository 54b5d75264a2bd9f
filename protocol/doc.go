// Package protocol owns the wire of MCP revision 2026-07-28 for a tools-only
// server: JSON-RPC 2.0 messages and their classification, the per-request
// `_meta` envelope, the HTTP header rules of SEP-2243, the error catalogue
// of DESIGN §5, and the result envelopes.
//
// It is pure: no I/O, no goroutines, no package state that changes. Every
// other wymcp package builds on it; it imports none of them.
//
// # Strict JSON
//
// Every byte that enters the server is decoded here, once, by the only JSON
// wrapper in wymcp (json.go). Decoding is strict — duplicate member names,
// invalid UTF-8 and lone surrogates are parse errors, member names match
// case-sensitively, nesting is bounded — because a gateway in front of us, the
// HTTP headers that mirror the body, and this server must all read the same
// message. A lenient parser that lets the last duplicate `method` win is a
// parser differential, and a parser differential is a security bug.
//
// Request bodies are read by a hand-written lexer (lex.go, names.go) in one
// pass that allocates nothing; it accepts exactly what goccy/go-json's
// strict mode accepts, which the differential fuzz targets check on every
// input. Everything else (tool arguments, answers) goes through go-json.
package protocol
