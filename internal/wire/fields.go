package wire

import (
	"errors"
	"math"
)

// fields are the members of a message the server reads, found in one pass
// over the body: the top level, params, params._meta and its clientInfo.
// Every value is a range of the body as sent (see span), so nothing is
// copied or decoded twice; the body must outlive the message, as a
// request's body does.
//
// Parse allocates one fields per request, so its layout is chosen for the
// garbage collector. It holds one reference, to the body, and every member
// as a pair of 32-bit offsets into it: 224 bytes in all (the 224-byte size
// class) where a slice header per member took 600 (the 640-byte class). And
// body comes first, so the only pointer is the first word: the collector
// stops scanning a fields there, rather than reading 24 slice headers that
// all point into the same body. (The two multi-round-trip members,
// inputResponses and requestState, took it from the 208-byte class to the
// 224-byte one: BenchmarkParse/typical measured no difference past the
// noise, one allocation either way.)
//
// One strict lexer (lex.go) does the whole pass: duplicate names (compared
// after unescaping), invalid UTF-8, lone surrogates, nesting past MaxDepth
// and trailing data are syntax errors wherever they are, including inside
// members the server never reads. Shape (a params that is not an object) is
// recorded, not judged: Parse and ParseRequest decide what it means.
type fields struct {
	// body is what every span indexes: the message body, or the params
	// value alone when ParseRequest reads a Message Parse did not make.
	body []byte

	// The top level.
	jsonrpc, id, method, params, result, error span
	// The members of params, when it is an object. inputResponses and
	// requestState are a multi-round-trip retry's (SEP-2322).
	meta, name, uri, arguments, cursor, legacyVersion span
	inputResponses, requestState                      span
	// The members of params._meta, when it is an object.
	m wireMeta
	// The members of _meta's clientInfo, when it is an object.
	clientInfo wireImplementation

	// Shape: set when params, params._meta and _meta's clientInfo are
	// objects. Kept together after the spans, so that they pad the struct
	// once rather than each after its level.
	paramsObject, metaObject, clientInfoObject bool
}

// wireMeta is a request `_meta` envelope, every member kept raw.
type wireMeta struct {
	ProtocolVersion, ClientCapabilities, ClientInfo, LogLevel, ProgressToken span
	Traceparent, Tracestate, Baggage                                         span
}

// wireImplementation is a `_meta` clientInfo object, its members kept raw.
type wireImplementation struct {
	Name, Version span
}

// span is the range body[off:end] of one value in fields.body; the zero
// span is a value that is absent.
//
// The zero span cannot be mistaken for a present value: a JSON value is
// never empty, so a present value ends after its first byte, end >= 1,
// wherever it starts. Starting at offset 0 is possible (when fields.body is
// a params value, params itself starts there), which is why absence is told
// by end alone and never by off.
type span struct{ off, end uint32 }

// present reports whether the value was in the body.
func (s span) present() bool { return s.end != 0 }

// raw returns the value s stands for as a slice of the body, its capacity
// capped at its end so that an append cannot write over the rest of the
// body; nil when the value is absent.
func (f *fields) raw(s span) RawJSON {
	if !s.present() {
		return nil
	}
	return RawJSON(f.body[s.off:s.end:s.end])
}

// maxSpanBody is the longest body whose offsets fit a span. The transport
// bounds bodies far below it; a longer one is refused (errBodyTooLong)
// rather than read with offsets that would silently wrap.
const maxSpanBody = math.MaxUint32

// errBodyTooLong is scan's and scanParams' error for a body past
// maxSpanBody. Parse answers it as it answers a syntax error: -32700, the
// server could not read the body.
var errBodyTooLong = errors.New("protocol: body too long to scan")

// fitsSpans reports whether every offset into body fits a span.
func fitsSpans(body []byte) bool { return uint64(len(body)) <= maxSpanBody }

// spanOf returns the span of body[start:end], for offsets the lexer
// returned. The scanner checks the body with fitsSpans before reading it, so
// the conversions are exact.
func spanOf(start, end int) span {
	return span{off: uint32(start), end: uint32(end)}
}
