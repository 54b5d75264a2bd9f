package policy

import (
	"math"

	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// dynamicCost costs, as a rule runs, a call whose overload the checker
// could not choose because an operand is dyn (args, the claims, the
// annotations, and what is read from them): cel-go costs such a call 1
// whatever its operands, so that a rule concatenating a large argument
// with itself a few hundred times, or searching a large list of the
// arguments as often, stayed within CostLimit while it ran for seconds
// and allocated hundreds of megabytes. Each is costed here at cel-go's
// own rate for the overload it resolves to (interpreter/runtimecost.go:
// a string or bytes concatenation by its operands' sizes, a comparison of
// two by the smaller, a list search by the list's). Other calls keep
// cel-go's cost.
type dynamicCost struct{}

func (dynamicCost) CallCost(function, overloadID string, args []ref.Val, _ ref.Val) *uint64 {
	if overloadID != "" || len(args) != 2 {
		return nil // chosen at check time: cel-go's rate applies
	}
	var cost float64
	switch function {
	case operators.Add:
		if !isText(args[0]) || !isText(args[1]) {
			return nil
		}
		cost = float64(sizeOf(args[0])+sizeOf(args[1])) * common.StringTraversalCostFactor
	case operators.Less, operators.LessEquals, operators.Greater, operators.GreaterEquals:
		if !isText(args[0]) || !isText(args[1]) {
			return nil
		}
		cost = float64(min(sizeOf(args[0]), sizeOf(args[1]))) * common.StringTraversalCostFactor
	case operators.In:
		if _, isList := args[1].(traits.Lister); !isList {
			return nil // a map's lookup
		}
		cost = float64(sizeOf(args[1]))
	default:
		return nil
	}
	c := uint64(math.Ceil(cost))
	return &c
}

// isText reports whether v is a string or bytes: what a concatenation or
// a comparison walks.
func isText(v ref.Val) bool {
	switch v.(type) {
	case types.String, types.Bytes:
		return true
	}
	return false
}

// sizeOf is v's size as cel-go's cost counts it.
func sizeOf(v ref.Val) uint64 {
	if s, ok := v.(traits.Sizer); ok {
		if n, ok := s.Size().(types.Int); ok && n > 0 {
			return uint64(n)
		}
	}
	return 1
}
