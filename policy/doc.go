// Package policy compiles rules written in CEL, the Common Expression
// Language (the one Kubernetes, Envoy and agentgateway use), into
// [access.Rule] values that a tool, an upstream or a gateway view carries
// (docs/design.md §11).
//
// A rule is one expression of type bool over these variables:
//
//	caller.sub        string        the token's sub ("" without auth)
//	caller.client_id  string        the OAuth client ("" when unknown)
//	caller.scopes     list(string)  the scopes granted
//	caller.claims     map(string, dyn)  every claim the token carries
//	caller.authenticated bool       whether the server authenticated the caller
//	tool.name         string        the served name
//	tool.upstream     string        the upstream serving it ("" for the server's own)
//	tool.annotations  map(string, dyn)  its hints as listed (readOnlyHint, …; only those given)
//	args              map(string, dyn)  the call's arguments
//
// For example: "only the on-call group may restart":
//
//	tool.name != "ops_restart" || "oncall" in caller.claims.groups
//
// and "contractors see read-only tools only":
//
//	!("contractors" in caller.claims.groups) || tool.annotations.?readOnlyHint.orValue(false)
//
// Expressions are parsed and type-checked by [Compile]: a name that is not
// one of these, or an expression that is not a bool, is an error then,
// not at a request. At a request a rule never panics the server and never
// runs unbounded: its cost is limited ([CostLimit]; see [MaxCallerSize]),
// and an evaluation that fails (a claim the token does not have, a cost
// past the limit) denies and is logged by the server.
//
// tools/list asks a rule without arguments: a rule whose answer depends on
// args allows there (partial evaluation: the part it can decide without
// them still decides) and the call decides.
//
// This package is the only one of wymcp's that imports cel-go: an
// embedder who does not import it links none of it.
package policy
