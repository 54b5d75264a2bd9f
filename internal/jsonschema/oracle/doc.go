// Package oracle holds wymcp's JSON Schema validator (internal/jsonschema)
// to a reference implementation, santhosh-tekuri/jsonschema/v6, which wymcp
// used before it had its own. It is a module of its own so that the
// reference stays out of the library's go.mod and binary: it is only ever
// a test's dependency. It has no code, only tests.
package oracle
