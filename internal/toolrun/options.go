package toolrun

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

// Option configures a [Tool] at construction (tools.Option wraps it).
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
	guards       []Guard
	errs         []error
}

// WithTitle implements tools.WithTitle, whose documentation it follows.
func WithTitle(title string) Option { return func(c *config) { c.title = title } }

// WithAnnotations implements tools.WithAnnotations, whose documentation it follows.
func WithAnnotations(a protocol.ToolAnnotations) Option {
	return func(c *config) { c.annotations = &a }
}

// WithIcons implements tools.WithIcons, whose documentation it follows.
func WithIcons(icons ...protocol.Icon) Option {
	return func(c *config) { c.icons = slices.Clone(icons) }
}

// WithMeta implements tools.WithMeta, whose documentation it follows.
func WithMeta(meta map[string]any) Option {
	return func(c *config) { c.meta = maps.Clone(meta) }
}

// WithDeadline implements tools.WithDeadline, whose documentation it follows.
func WithDeadline(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.errs = append(c.errs, errors.New("negative deadline"))
			return
		}
		c.deadline = d
	}
}

// WithRequiredCapabilities implements tools.WithRequiredCapabilities, whose documentation it follows.
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

// WithOutputSchema implements tools.WithOutputSchema, whose documentation it follows.
func WithOutputSchema(schema []byte) Option {
	return func(c *config) {
		c.outputSchema = slices.Clone(schema)
		c.hasOutput = true
	}
}
