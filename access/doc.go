// Package access holds what decides who may see and call a tool, and how
// often (docs/design.md §11): a [Rule], which a tool, an upstream or a
// gateway view carries, and a [Limit] on calls per caller, counted by a
// [Limiter]. It is values and interfaces only, with a per-replica
// [NewLimiter]; the rules themselves are the embedder's, or package
// github.com/wymcp/wymcp/policy's, which compiles them from CEL. A server
// none of whose tools carries a rule or a limit consults nothing here.
package access
