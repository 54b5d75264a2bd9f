package jsonschema

import "encoding/json"

// normalize prepares a value written in a schema ("const", "enum") for
// comparison with instances: its numbers become *number. It fails on a
// number newNumber refuses.
func normalize(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		return newNumber(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	}
	return v, nil
}

// equal reports whether two JSON values are equal as JSON Schema defines
// it: numbers by value (1 equals 1.0), arrays item by item, objects member
// by member regardless of order. Each side is an instance value (numbers
// as float64) or a normalized schema value (numbers as *number).
func equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case float64:
		switch b := b.(type) {
		case float64:
			return a == b
		case *number:
			return b.cmp(a) == 0
		}
		return false
	case *number:
		switch b := b.(type) {
		case float64:
			return a.cmp(b) == 0
		case *number:
			return a.rat.Cmp(b.rat) == 0
		}
		return false
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equal(a[i], bs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}
