package tools

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/wymcp/wymcp/protocol"
)

// DefaultDeadline bounds a call of a tool that sets no [WithDeadline]. A
// minute is long enough for a tool that calls a slow API and short enough
// that a client of a stuck handler is not kept waiting: it is answered with
// an isError result at the deadline (plus a second's grace for a handler
// that ignores its context, which still holds its in-flight place until it
// returns).
const DefaultDeadline = 60 * time.Second

// Option configures a [Tool] at construction. Options are functional here,
// unlike the server's options struct, because each tool has its own
// few optional fields and is usually written as one expression in a
// package-level tool set.
type Option func(*config)

type config struct {
	title        string
	annotations  *protocol.ToolAnnotations
	icons        []protocol.Icon
	meta         map[string]any
	deadline     time.Duration
	capabilities []string
	scopes       []string
	outputSchema []byte
	hasOutput    bool
	errs         []error
}

// WithTitle sets the human-readable title that clients show instead of the
// name.
func WithTitle(title string) Option { return func(c *config) { c.title = title } }

// WithAnnotations sets the behaviour hints (read-only, destructive, …).
// They are hints for the client only; wymcp enforces none of them.
func WithAnnotations(a protocol.ToolAnnotations) Option {
	return func(c *config) { c.annotations = &a }
}

// WithIcons sets the tool's icons. The slice is copied.
func WithIcons(icons ...protocol.Icon) Option {
	return func(c *config) { c.icons = slices.Clone(icons) }
}

// WithMeta sets the tool's _meta object in tools/list. The map is copied
// (shallowly) and must encode as JSON, or [New] fails.
func WithMeta(meta map[string]any) Option {
	return func(c *config) { c.meta = maps.Clone(meta) }
}

// WithDeadline bounds each call of the tool: the handler's context is done
// after d. Zero means [DefaultDeadline]; a negative d makes [New] fail,
// because a tool that can never run is a configuration mistake.
func WithDeadline(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, errors.New("negative deadline"))
			return
		}
		c.deadline = d
	}
}

// WithRequiredCapabilities names the client capabilities the tool needs, such
// as "sampling". The server answers -32021 to a call whose request did not
// declare them (docs/design.md §5), before the tool runs. Repeated names are
// kept once.
func WithRequiredCapabilities(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			if n == "" {
				c.errs = append(c.errs, errors.New("empty required capability name"))
				return
			}
			if !slices.Contains(c.capabilities, n) {
				c.capabilities = append(c.capabilities, n)
			}
		}
	}
}

// WithOutputSchema gives a raw tool an output schema: a JSON Schema 2020-12
// document (since 2026-07-28 its root may describe any JSON value, not only
// an object), kept byte-for-byte like the input schema. Each result's structuredContent is
// validated against it. Typed tools infer theirs from Out, so [New] refuses
// this option.
func WithOutputSchema(schema []byte) Option {
	return func(c *config) {
		c.outputSchema = slices.Clone(schema)
		c.hasOutput = true
	}
}
