package toolrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// Tool is a tool the server offers. Immutable after construction; safe for
// concurrent use. Build one with [New] or [NewRaw].
type Tool struct {
	def      wire.Tool
	caps     []string
	scopes   []string // see WithScopes
	deadline time.Duration
	input    *jsonschema.Schema
	output   *jsonschema.Schema // raw tools with WithOutputSchema only
	headers  []wire.HeaderParam
	run      handler
	// forward, when set, makes the tool a forwarded one (forward.go): run,
	// input and output are unused.
	forward Forward

	// guards are the rules and limits that apply (guard.go); upstream is
	// the upstream a forwarded tool is served for, and info what a rule
	// sees of the tool, made once by seal.
	guards              []Guard
	upstream            string
	info                *access.Tool
	hasRules, hasLimits bool

	// fastInput and fastOutput decide "certainly valid" on the raw bytes
	// without decoding (fastschema.go); nil when the schema has keywords
	// outside their subset, and then every call takes the full path.
	fastInput  *fastSchema
	fastOutput *fastSchema
}

// handler runs the tool on arguments that passed the input schema: raw is
// the arguments as sent (never nil). It returns the result or the handler's
// error; an invalid bool marks arguments that the schema admitted but the Go
// type could not hold (a typed tool's decode), whose message is in err.
type handler func(ctx context.Context, raw []byte) (res *protocol.CallToolResult, invalid bool, err error)

// Must returns t, and panics if err is not nil. It is for package-level tool
// sets, where a bad tool is a programming error found at start-up.
func Must(t *Tool, err error) *Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name, unique within a server.
func (t *Tool) Name() string { return t.def.Name }

// Definition returns the tool as tools/list shows it. The schemas are the
// bytes the tool was built with. It is a copy: changing it changes nothing.
func (t *Tool) Definition() wire.Tool {
	d := t.def
	d.InputSchema = slices.Clone(d.InputSchema)
	d.OutputSchema = slices.Clone(d.OutputSchema)
	d.Icons = slices.Clone(d.Icons)
	d.Meta = maps.Clone(d.Meta)
	if d.Annotations != nil {
		a := *d.Annotations
		d.Annotations = &a
	}
	return d
}

// RequiredCapabilities returns the client capabilities the tool needs (see
// [WithRequiredCapabilities]); nil when none. It is a copy.
func (t *Tool) RequiredCapabilities() []string { return slices.Clone(t.caps) }

// Deadline returns how long one call may run (see [WithDeadline]).
func (t *Tool) Deadline() time.Duration { return t.deadline }

// build checks what every tool shares — name, description, handler, options —
// and assembles the Tool around its compiled schemas.
func build(name, description string, nilFn bool, inputSchema []byte, outputSchema []byte, typed bool, opts []Option) (*Tool, *config, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	if description == "" {
		return nil, nil, fmt.Errorf("tools: tool %q: empty description (docs/design.md §6: every tool has one)", name)
	}
	if nilFn {
		return nil, nil, fmt.Errorf("tools: tool %q: nil handler", name)
	}
	c := &config{}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if len(c.errs) > 0 {
		return nil, nil, fmt.Errorf("tools: tool %q: %w", name, errors.Join(c.errs...))
	}
	if c.hasOutput {
		if typed {
			return nil, nil, fmt.Errorf("tools: tool %q: WithOutputSchema is for raw tools; a typed tool's output schema comes from Out", name)
		}
		outputSchema = c.outputSchema
	}
	t := &Tool{
		def: wire.Tool{
			Name:         name,
			Title:        c.title,
			Description:  description,
			InputSchema:  inputSchema,
			OutputSchema: outputSchema,
			Annotations:  c.annotations,
			Icons:        c.icons,
			Meta:         c.meta,
		},
		caps:     c.capabilities,
		scopes:   c.scopes,
		deadline: c.deadline,
		guards:   c.guards,
	}
	t.seal()
	if t.deadline == 0 {
		t.deadline = DefaultDeadline
	}
	var err error
	if t.input, err = compile(inputSchema, true); err != nil {
		return nil, nil, fmt.Errorf("tools: tool %q: input schema: %w", name, err)
	}
	t.fastInput = compileFast(inputSchema)
	if t.headers, err = parseHeaderParams(inputSchema); err != nil {
		return nil, nil, fmt.Errorf("tools: tool %q: input schema: %w", name, err)
	}
	if outputSchema != nil {
		if t.output, err = compile(outputSchema, false); err != nil {
			return nil, nil, fmt.Errorf("tools: tool %q: output schema: %w", name, err)
		}
		t.fastOutput = compileFast(outputSchema)
	}
	// Encode the definition now so that a _meta value goccy cannot encode
	// fails New, not the first tools/list.
	if _, err := wire.AppendTool(nil, &t.def); err != nil {
		return nil, nil, fmt.Errorf("tools: tool %q: definition does not encode: %w", name, err)
	}
	return t, c, nil
}

// checkName enforces ^[A-Za-z0-9_.-]{1,128}$ (docs/design.md §6), byte by
// byte: the set is ASCII, so no regexp is needed.
func checkName(name string) error {
	if len(name) == 0 || len(name) > 128 {
		return fmt.Errorf("tools: invalid tool name %q: must be 1 to 128 characters", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Errorf("tools: invalid tool name %q: byte %q at %d is not one of A-Z a-z 0-9 _ . -", name, c, i)
		}
	}
	return nil
}

// Of returns the compiled tool behind a *tools.Tool, nil for anything
// else. Package tools sets it when it is initialized: it imports this
// package, so this package cannot name its type, and wymcp.New reads its
// tools through Of.
var Of func(public any) *Tool

// Wrap returns the *tools.Tool of a compiled tool: package upstream builds
// its forwarded tools here and hands them to embedders as tools. Package
// tools sets it when it is initialized, as it sets [Of].
var Wrap func(*Tool) any
