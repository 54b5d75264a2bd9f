// Package wire is the server side of the MCP 2026-07-28 wire for a
// tools-only server: it classifies one JSON-RPC message (Parse), reads its
// params and `_meta` envelope (ParseRequest), holds every header rule of
// SEP-2243 (CheckHeaders, CheckParamHeaders) and the version and capability
// checks, the error catalogue of docs/design.md §5 (Code, Error), and the
// encoders of the objects answers are made of (a tools/call result, an
// error).
//
// It is pure: no I/O, no goroutines, no package state that changes. The HTTP
// edge (internal/transport) calls it and frames what it returns; the
// envelopes, with their ids, are the edge's.
//
// A body is read once, by internal/strictjson's lexer (scan.go): the members
// the server needs are recorded as spans of the body (fields.go), so nothing
// is copied or decoded twice, and every other member is still checked
// strictly, since a member the server skips is one a gateway in front of it
// may read.
package wire
