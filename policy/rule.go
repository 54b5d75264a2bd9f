package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/wymcp/wymcp/access"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// CostLimit bounds what one evaluation of a rule may cost, in CEL's cost
// units (about one per operation, and one per element a comprehension or
// a list search visits): far above what a rule over a token's claims
// needs, far below what would hold a request for long.
const CostLimit = 100_000

// MaxExpressionSize bounds a rule's text, in code points.
const MaxExpressionSize = 4096

// MaxCallerSize is the size CEL's cost estimate takes for the caller's and
// the tool's values (every string, list and map in them, claims
// included): the largest credential package auth reads, an introspection
// answer of 64 KiB, holds nothing larger (a JWT is at most 8 KiB). A rule
// over them alone whose estimate is within CostLimit is evaluated without
// counting its cost; one that reads the arguments, which are as large as
// a request, always counts. An authenticator of an embedder's own whose
// claims hold more than this may let such a rule run past CostLimit.
const MaxCallerSize = 64 << 10

// MaxEvalTime bounds the time of one evaluation of a rule whose cost is
// counted as it runs (one that walks the claims or the arguments): past
// it the evaluation is interrupted, and the rule denies.
const MaxEvalTime = 20 * time.Millisecond

// sizes is the cost estimate's knowledge of the variables' sizes.
type sizes struct{}

func (sizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if p := n.Path(); len(p) > 0 && (strings.HasPrefix(p[0], "caller.") || strings.HasPrefix(p[0], "tool.")) {
		return &checker.SizeEstimate{Min: 0, Max: MaxCallerSize}
	}
	return nil
}

func (sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// Rule is a compiled CEL rule: an [access.Rule]. It is safe for concurrent
// use.
type Rule struct {
	expr string
	prg  cel.Program
	// partial evaluates the rule with args unknown, for tools/list; nil
	// when the rule does not read args.
	partial cel.Program
	// counted marks a rule whose cost is counted as it runs, and whose
	// time is bounded (MaxEvalTime): cel-go's counting makes a long
	// comprehension's evaluation grow faster than its cost.
	counted bool
}

var _ access.Rule = (*Rule)(nil)

// variables names them for an error.
const variables = "caller.sub, caller.client_id, caller.scopes, caller.claims, caller.authenticated, tool.name, tool.upstream, tool.annotations, args"

// env is the environment every rule is checked in: the variables of the
// package documentation, and CEL's optional types (x.?y.orValue(z)).
var env = func() *cel.Env {
	e, err := cel.NewEnv(
		cel.Variable("caller.sub", cel.StringType),
		cel.Variable("caller.client_id", cel.StringType),
		cel.Variable("caller.scopes", cel.ListType(cel.StringType)),
		cel.Variable("caller.claims", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("caller.authenticated", cel.BoolType),
		cel.Variable("tool.name", cel.StringType),
		cel.Variable("tool.upstream", cel.StringType),
		cel.Variable("tool.annotations", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxExpressionSize),
		cel.ParserRecursionLimit(100),
	)
	if err != nil {
		panic(err) // the declarations above are fixed
	}
	return e
}()

// Compile parses and type-checks expr. The error names what is wrong and
// where, on one line.
func Compile(expr string) (*Rule, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, errors.New("empty expression")
	}
	checked, iss := env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, issueError(iss)
	}
	if t := checked.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("the expression is of type %s, not bool", t)
	}
	// A rule whose worst cost is known to be within the limit runs
	// without counting it: counting costs more than such a rule's whole
	// evaluation. Any other rule counts, and stops at the limit; its
	// operations on dyn operands are counted by their size (dynamicCost).
	var opts []cel.ProgramOption
	r := &Rule{expr: expr}
	if est, err := env.EstimateCost(checked, sizes{}); err != nil || est.Max > CostLimit {
		opts = append(opts, cel.CostLimit(CostLimit), cel.CostTracking(dynamicCost{}), cel.InterruptCheckFrequency(64))
		r.counted = true
	}
	var err error
	if r.prg, err = env.Program(checked, opts...); err != nil {
		return nil, err
	}
	for _, ref := range checked.NativeRep().ReferenceMap() {
		if ref.Name == "args" {
			if r.partial, err = env.Program(checked, append(opts, cel.EvalOptions(cel.OptPartialEval))...); err != nil {
				return nil, err
			}
			break
		}
	}
	return r, nil
}

// issueError is iss on one line: each error's column and message.
func issueError(iss *cel.Issues) error {
	var b strings.Builder
	for i, e := range iss.Errors() {
		if i > 0 {
			b.WriteString("; ")
		}
		if col := e.Location.Column(); col >= 0 {
			fmt.Fprintf(&b, "column %d: ", col+1)
		}
		b.WriteString(strings.Join(strings.Fields(e.Message), " "))
		if strings.Contains(e.Message, "undeclared reference") {
			b.WriteString(" (the variables are " + variables + ")")
		}
	}
	return errors.New(b.String())
}

// String returns the rule's expression.
func (r *Rule) String() string { return r.expr }

// Allow implements access.Rule: true when the expression is true. An
// evaluation that fails, or is not a bool, denies with the error; a panic
// inside cel-go is returned as one.
func (r *Rule) Allow(ctx context.Context, req *access.Request) (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			ok, err = false, fmt.Errorf("policy: the rule panicked: %v", v)
		}
	}()
	a := activations.Get().(*activation)
	a.req = req
	defer a.release()
	prg := r.prg
	var in any = a
	if req.Listing && r.partial != nil {
		prg = r.partial
		if in, err = cel.PartialVars(a, cel.AttributePattern("args")); err != nil {
			return false, err
		}
	} else if len(req.Args) > 0 && r.partial != nil {
		// Only a rule that reads args pays for decoding them.
		if err := strictjson.Unmarshal(req.Args, &a.args); err != nil {
			return false, fmt.Errorf("policy: the arguments are not a JSON object: %w", err)
		}
	}
	var out ref.Val
	if r.counted {
		ctx, cancel := context.WithTimeout(ctx, MaxEvalTime)
		out, _, err = prg.ContextEval(ctx, in)
		cancel()
	} else {
		out, _, err = prg.Eval(in)
	}
	if err != nil {
		return false, fmt.Errorf("policy: %q: %w", r.expr, err)
	}
	if types.IsUnknown(out) {
		return true, nil // decided by the call's arguments
	}
	b, isBool := out.Value().(bool)
	if !isBool {
		return false, fmt.Errorf("policy: %q is %s, not a bool", r.expr, out.Type())
	}
	return b, nil
}

// empty stands for a map the request does not have (no claims, no
// arguments): read only.
var empty = map[string]any{}

// activation resolves the variables from the request, each when the rule
// reads it. Activations are pooled: one per evaluation was a quarter of a
// simple rule's allocations.
type activation struct {
	req  *access.Request
	args map[string]any
}

var activations = sync.Pool{New: func() any { return new(activation) }}

// release gives a back to the pool, holding nothing of its request.
func (a *activation) release() {
	a.req, a.args = nil, nil
	activations.Put(a)
}

func (a *activation) ResolveName(name string) (any, bool) {
	c, t := a.req.Caller, a.req.Tool
	switch name {
	case "caller.sub":
		if c == nil {
			return "", true
		}
		return c.Subject, true
	case "caller.client_id":
		if c == nil {
			return "", true
		}
		return c.ClientID, true
	case "caller.scopes":
		if c == nil || c.Scopes == nil {
			return []string{}, true
		}
		return c.Scopes, true
	case "caller.claims":
		if c == nil || c.Claims == nil {
			return empty, true
		}
		return c.Claims, true
	case "caller.authenticated":
		return c != nil, true
	case "tool.name":
		return t.Name, true
	case "tool.upstream":
		return t.Upstream, true
	case "tool.annotations":
		if t.Annotations == nil {
			return empty, true
		}
		return t.Annotations, true
	case "args":
		if a.args == nil {
			return empty, true
		}
		return a.args, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }
