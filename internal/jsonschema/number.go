package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// number is a number written in a schema, kept exactly.
//
// Instances are float64s and are compared by their shortest decimal form
// (strconv's 'g', -1), the digits a client wrote for any value a float64
// holds. When the schema's number is itself the shortest decimal form of a
// float64 (2, 0.5, 600000, 1e-3: nearly every bound ever written), comparing
// the two float64s gives the same answer as comparing the decimals, because
// rounding to the nearest float64 keeps order; then no big.Rat is made.
type number struct {
	text  string   // as written, for messages
	rat   *big.Rat // the exact value
	f     float64  // the nearest float64, when fast
	fast  bool     // rat is exactly the shortest decimal form of f
	small int64    // the value, when it is an integer of at most 15 digits
	isInt bool     // small holds the value
}

// newNumber reads a schema number. It refuses a JSON number whose exponent
// is beyond what big.Rat will expand (±1,000,000: "1e9999999"): it cannot be
// compared exactly, and guessing (santhosh ignores such a bound) would let
// "minimum": 1e9999999 allow every number.
func newNumber(n json.Number) (*number, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil, fmt.Errorf("%s: the exponent is too large to hold the number exactly", n)
	}
	num := &number{text: string(n), rat: r}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		if back, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64)); ok && back.Cmp(r) == 0 {
			num.f, num.fast = f, true
		}
	}
	if r.IsInt() && r.Num().IsInt64() {
		if v := r.Num().Int64(); v > -1e15 && v < 1e15 {
			num.small, num.isInt = v, true
		}
	}
	return num, nil
}

// decimal returns the exact value of an instance number's shortest decimal
// form.
func decimal(x float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	return r
}

// cmp compares an instance number with n: -1, 0 or +1 as x is less than,
// equal to or greater than n.
func (n *number) cmp(x float64) int {
	if n.fast {
		switch {
		case x < n.f:
			return -1
		case x > n.f:
			return 1
		}
		return 0
	}
	return decimal(x).Cmp(n.rat)
}

// divides reports whether n divides x: whether x is a multiple of n, which
// "multipleOf" requires to be positive.
func (n *number) divides(x float64) bool {
	if n.isInt && x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return int64(x)%n.small == 0
	}
	return new(big.Rat).Quo(decimal(x), n.rat).IsInt()
}

// isInteger reports whether an instance number has no fractional part.
func isInteger(x float64) bool {
	return x == math.Trunc(x) && !math.IsInf(x, 0)
}

// formatNumber writes an instance number for a message.
func formatNumber(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}
