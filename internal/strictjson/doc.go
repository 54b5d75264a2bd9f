// Package strictjson is the one authority in wymcp on what is valid JSON:
// one value, RFC 8259's grammar with the stricter rules of RFC 7493
// (I-JSON) that goccy/go-json's strict mode also applies — strings are
// valid UTF-8 with no lone surrogate escapes, no object has two members of
// the same name (compared after unescaping), nesting stops at MaxDepth, and
// nothing follows the value.
//
// Why strict: a gateway in front of the server, the HTTP headers that mirror
// the body, and the server must all read the same message. A lenient parser
// that lets the last of two `method` members win is a parser differential,
// and a parser differential is a security bug. So the request body
// (internal/wire's scan) and the fast path of argument validation (tools)
// both read with this package's Lexer, and tool arguments decoded later
// (Unmarshal) follow the same rules.
//
// The Lexer is hand-written, single-pass and allocation-free for ordinary
// inputs; a differential fuzz target holds it to goccy/go-json's strict
// validator and encoding/json on every input.
package strictjson
