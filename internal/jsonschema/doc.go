// Package jsonschema compiles and applies JSON Schema 2020-12 documents:
// the input and output schemas of wymcp's tools.
//
// It is wymcp's own, for one reason: a validator's compiled meta-schemas
// are live heap that every garbage collection marks, for the life of the
// process. The library wymcp used before (santhosh-tekuri/jsonschema/v6)
// compiles five drafts' meta-schemas in its package init, and that heap
// was the largest cause of wymcp's p99 latency excess over a bare
// net/http handler (bench/README.md, "Where the tail comes from"). Here the
// meta-schema is code (keywords.go), which costs no heap at all.
//
// What it does, and what it refuses:
//   - Dialect: 2020-12 only. A "$schema" naming another dialect is refused
//     at compile time; MCP makes 2020-12 the default and asks servers to
//     refuse a dialect they do not support rather than guess.
//   - Vocabularies: core, applicator, unevaluated and validation are
//     asserted; meta-data, format-annotation and content are annotations
//     (their values are checked, never asserted), as the 2020-12
//     meta-schema declares by default.
//   - References: "$ref", "$dynamicRef", "$anchor", "$dynamicAnchor" and
//     embedded resources with "$id" resolve within the one document. Every
//     other URL is refused at compile time: nothing is ever fetched
//     (docs/design.md §6), not even the standard meta-schemas. Every
//     reference must resolve, also one in a schema nothing uses. A
//     reference cycle that never reaches into the value ({"$ref": "#"}) is
//     a failure.
//   - Numbers in the schema keep their exact decimal value; one with an
//     exponent beyond ±1,000,000, which big.Rat will not expand, is
//     refused at compile time rather than compared inexactly. An instance
//     number is a float64 (how strictjson.Unmarshal decodes arguments) and
//     is compared by its shortest decimal form, the digits a client sent
//     for any number a float64 holds: 0.07 is a multiple of 0.01.
//   - Patterns are Go regular expressions (RE2): a pattern RE2 cannot
//     compile, such as a lookahead, is refused at compile time.
//
// A compiled [Schema] is immutable and safe for concurrent use. Validation
// reports every failing leaf with its instance location; the differential
// tests in internal/jsonschema/oracle hold it to santhosh-tekuri/jsonschema
// on which documents compile and which instances are valid.
package jsonschema
