package tools

import (
	"time"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/protocol"
)

// Option configures a [Tool] at construction. Options are functional here,
// unlike the server's options struct, because each tool has its own few
// optional fields and is usually written as one expression in a
// package-level tool set. The zero Option changes nothing.
type Option struct {
	apply toolrun.Option
}

func unwrapOptions(opts []Option) []toolrun.Option {
	out := make([]toolrun.Option, len(opts))
	for i, o := range opts {
		out[i] = o.apply
	}
	return out
}

// WithTitle sets the human-readable title that clients show instead of the
// name.
func WithTitle(title string) Option { return Option{toolrun.WithTitle(title)} }

// WithAnnotations sets the behaviour hints (read-only, destructive, …).
// They are hints for the client only; wymcp enforces none of them.
func WithAnnotations(a protocol.ToolAnnotations) Option {
	return Option{toolrun.WithAnnotations(a)}
}

// WithIcons sets the tool's icons. The slice is copied.
func WithIcons(icons ...protocol.Icon) Option { return Option{toolrun.WithIcons(icons...)} }

// WithMeta sets the tool's _meta object in tools/list. The map is copied
// (shallowly) and must encode as JSON, or [New] fails.
func WithMeta(meta map[string]any) Option { return Option{toolrun.WithMeta(meta)} }

// WithDeadline bounds each call of the tool: the handler's context is done
// after d, and the call is answered with an isError result naming the tool
// and its deadline (docs/design.md §5). Zero means a minute: long enough for
// a tool that calls a slow API, short enough that the client of a stuck
// handler is not kept waiting. A negative d makes [New] fail, because a tool
// that can never run is a configuration mistake. A handler that ignores its
// context is answered at the deadline all the same, and still holds its
// in-flight place until it returns.
func WithDeadline(d time.Duration) Option { return Option{toolrun.WithDeadline(d)} }

// WithRequiredCapabilities names the client capabilities the tool needs, such
// as "sampling". The server answers -32021 to a call whose request did not
// declare them (docs/design.md §5), before the tool runs. Repeated names are
// kept once.
func WithRequiredCapabilities(names ...string) Option {
	return Option{toolrun.WithRequiredCapabilities(names...)}
}

// WithOutputSchema gives a raw tool an output schema: a JSON Schema 2020-12
// document (since 2026-07-28 its root may describe any JSON value, not only
// an object), kept byte-for-byte like the input schema. Each result's
// structuredContent is validated against it. Typed tools infer theirs from
// Out, so [New] refuses this option.
func WithOutputSchema(schema []byte) Option { return Option{toolrun.WithOutputSchema(schema)} }

// WithScopes names the OAuth scopes a caller needs, all of them, to call
// the tool and to see it in tools/list (docs/design.md §6). tools/list
// leaves the tool out of the pages of a caller without them, which are
// then marked cacheScope "private" (tools/list may vary by the request's
// authorization), and such a caller's tools/call of it is answered, before
// the tool runs, exactly as the call of a tool the server does not have
// (-32602 "Unknown tool"), or, with wymcp.AuthOptions.ScopeChallenge, 403
// insufficient_scope naming every scope the call needs.
//
// Each scope must be an RFC 6749 §3.3 scope token (printable ASCII without
// space, '"' or '\'), or [New] fails. Repeated scopes are kept once. A
// server with a scoped tool needs an authenticator: wymcp.New refuses the
// tool set otherwise, since without one no caller could be granted a scope
// and the tool would be unreachable.
func WithScopes(scopes ...string) Option { return Option{toolrun.WithScopes(scopes...)} }

// WithAllow makes rule decide who may see and call the tool
// (docs/design.md §11), beside its scopes: a caller the rule denies does
// not find the tool in its tools/list, and its call is answered as the
// call of a tool the server does not have (-32602 "Unknown tool"), before
// the tool runs. Package github.com/wymcp/wymcp/policy compiles rules from
// CEL. The option may be given more than once: every rule must allow.
func WithAllow(rule access.Rule) Option { return Option{toolrun.WithGuard(rule, access.Limit{})} }

// WithRateLimit bounds the calls of the tool per caller (docs/design.md
// §11): past l, a call is answered HTTP 429 with Retry-After before the
// tool runs, while other callers go on. The calls are counted by the
// server's wymcp.Options.Limiter. A limit with a count or an interval that
// is not positive makes [New] fail.
func WithRateLimit(l access.Limit) Option { return Option{toolrun.WithGuard(nil, l)} }
