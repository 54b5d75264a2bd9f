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
// arguments as often, stayed within CostLimit however long it ran. Each
// is costed here at cel-go's own rate for the overload it resolves to (a
// string or bytes concatenation by its operands' sizes, a comparison of
// two by the smaller, a list search by the list's). An equality of two
// lists or maps, which cel-go costs by their length as if they held
// bytes, is costed one per element compared, at every depth. Other calls
// keep cel-go's cost.
type dynamicCost struct{}

func (dynamicCost) CallCost(function, overloadID string, args []ref.Val, _ ref.Val) *uint64 {
	if len(args) != 2 {
		return nil
	}
	a, b := args[0], args[1]
	var cost float64
	switch {
	case function == operators.Equals || function == operators.NotEquals:
		// cel-go's rate is by the operands' length, as if their elements
		// were bytes; each element of a list or a map is a value
		// compared in turn, at any depth.
		if !isAggregate(a) || !isAggregate(b) {
			return nil
		}
		cost = float64(min(deepSize(a), deepSize(b)))
	case overloadID != "":
		return nil // chosen at check time: cel-go's rate applies
	case function == operators.Add && isText(a) && isText(b):
		cost = float64(sizeOf(a)+sizeOf(b)) * common.StringTraversalCostFactor
	case (function == operators.Less || function == operators.LessEquals ||
		function == operators.Greater || function == operators.GreaterEquals) && isText(a) && isText(b):
		cost = float64(min(sizeOf(a), sizeOf(b))) * common.StringTraversalCostFactor
	case function == operators.In:
		if _, isList := b.(traits.Lister); !isList {
			return nil // a map's lookup
		}
		cost = float64(sizeOf(b))
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

// isAggregate reports whether v is a list or a map.
func isAggregate(v ref.Val) bool {
	switch v.(type) {
	case traits.Lister, traits.Mapper:
		return true
	}
	return false
}

// deepSize counts the elements of v, a list or a map, at every depth, up
// to just past CostLimit: past it the count is past the limit already.
func deepSize(v ref.Val) uint64 {
	var n uint64
	var walk func(v ref.Val)
	walk = func(v ref.Val) {
		var it traits.Iterator
		var m traits.Mapper
		switch x := v.(type) {
		case traits.Lister:
			it = x.Iterator()
		case traits.Mapper:
			it, m = x.Iterator(), x
		default:
			return
		}
		for n <= CostLimit && it.HasNext() == types.True {
			n++
			e := it.Next()
			if m != nil {
				e = m.Get(e)
			}
			walk(e)
		}
	}
	walk(v)
	return n
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
