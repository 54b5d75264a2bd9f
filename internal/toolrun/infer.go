package toolrun

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"
	"github.com/wymcp/wymcp/internal/wire"
)

// Schema inference for typed tools. It runs once, in New, and writes the
// schema bytes directly so that key order is fixed (struct field order for
// properties) and tools/list is byte-stable across builds. It follows how
// protocol.Unmarshal (goccy/go-json v2, encoding/json/v2 semantics) reads the
// same type, so that what the schema admits is what the decode accepts.

var (
	timeType    = reflect.TypeFor[time.Time]()
	rawJSONType = reflect.TypeFor[wire.RawJSON]()
)

// inferrer holds the struct types being expanded, to refuse recursion: a
// recursive type needs $defs and $ref, which inference does not write.
type inferrer struct {
	expanding map[reflect.Type]bool
}

// inferObject returns the schema of t and whether its root is an object
// ("type":"object"), as a tool's input and output schemas must be.
func inferObject(t reflect.Type) (schema []byte, isObject bool, err error) {
	in := &inferrer{expanding: map[reflect.Type]bool{}}
	schema, err = in.append(nil, t, "", false)
	if err != nil {
		return nil, false, err
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	isObject = special(t) == "" && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map)
	return schema, isObject, nil
}

// special says how a type that codes itself is described: "any" for JSON
// (un)marshalers, wire.RawJSON and interfaces; "string" for text
// (un)marshalers; "time" for time.Time (RFC 3339); "" for everything else.
// The methods are looked up on *T because they usually have pointer receivers.
func special(t reflect.Type) string {
	switch {
	case t == timeType:
		return "time"
	case t == rawJSONType, t.Kind() == reflect.Interface:
		return "any"
	}
	p := reflect.PointerTo(t)
	for _, m := range []string{"MarshalJSON", "UnmarshalJSON", "MarshalJSONTo", "UnmarshalJSONFrom"} {
		if _, ok := p.MethodByName(m); ok {
			return "any"
		}
	}
	for _, m := range []string{"MarshalText", "UnmarshalText"} {
		if _, ok := p.MethodByName(m); ok {
			return "string"
		}
	}
	return ""
}

// append writes the schema of t. desc is the description from the field's
// `jsonschema` tag; asString is the field's `,string` option.
func (in *inferrer) append(b []byte, t reflect.Type, desc string, asString bool) ([]byte, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch special(t) {
	case "time":
		return object(b, "string", desc, `"format":"date-time"`), nil
	case "any":
		return object(b, "", desc, ""), nil
	case "string":
		return object(b, "string", desc, ""), nil
	}
	switch k := t.Kind(); k {
	case reflect.Bool:
		return object(b, "boolean", desc, ""), nil
	case reflect.String:
		return object(b, "string", desc, ""), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if asString {
			return object(b, "string", desc, ""), nil
		}
		return object(b, "integer", desc, intBounds(k)), nil
	case reflect.Float32, reflect.Float64:
		if asString {
			return object(b, "string", desc, ""), nil
		}
		return object(b, "number", desc, ""), nil
	case reflect.Slice, reflect.Array:
		// encoding/json/v2 codes []byte and [N]byte as Base64 strings.
		if t.Elem().Kind() == reflect.Uint8 && special(t.Elem()) == "" {
			return object(b, "string", desc, `"contentEncoding":"base64"`), nil
		}
		items, err := in.append(nil, t.Elem(), "", false)
		if err != nil {
			return nil, err
		}
		rest := `"items":` + string(items)
		if k == reflect.Array {
			n := strconv.Itoa(t.Len())
			rest += `,"minItems":` + n + `,"maxItems":` + n
		}
		return object(b, "array", desc, rest), nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s: only string keys are supported", t.Key())
		}
		values, err := in.append(nil, t.Elem(), "", false)
		if err != nil {
			return nil, err
		}
		return object(b, "object", desc, `"additionalProperties":`+string(values)), nil
	case reflect.Struct:
		return in.appendStruct(b, t, desc)
	default:
		return nil, fmt.Errorf("type %s: kind %s has no JSON form", t, k)
	}
}

// intBounds bounds the integers whose range a JSON number can state exactly,
// so that 300 for a uint8 fails validation with a message instead of the
// decode.
func intBounds(k reflect.Kind) string {
	var lo, hi int64
	switch k {
	case reflect.Int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case reflect.Int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case reflect.Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	case reflect.Uint8:
		hi = math.MaxUint8
	case reflect.Uint16:
		hi = math.MaxUint16
	case reflect.Uint32:
		hi = math.MaxUint32
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return `"minimum":0`
	default:
		return ""
	}
	return `"minimum":` + strconv.FormatInt(lo, 10) + `,"maximum":` + strconv.FormatInt(hi, 10)
}

// object writes {"type":typ,"description":desc,rest}, leaving out the empty parts.
func object(b []byte, typ, desc, rest string) []byte {
	b = append(b, '{')
	sep := false
	if typ != "" {
		b = append(b, `"type":"`...)
		b = append(b, typ...)
		b = append(b, '"')
		sep = true
	}
	if desc != "" {
		if sep {
			b = append(b, ',')
		}
		b = append(b, `"description":`...)
		b, _ = jsontext.AppendQuote(b, desc) // fails only on invalid UTF-8, which it replaces
		sep = true
	}
	if rest != "" {
		if sep {
			b = append(b, ',')
		}
		b = append(b, rest...)
	}
	return append(b, '}')
}

// field is one JSON member of a struct after embedding is flattened.
type field struct {
	name     string
	typ      reflect.Type
	desc     string
	required bool
	asString bool
	depth    int  // embedding depth, for Go's dominance rule
	tagged   bool // the name came from a json tag
}

// appendStruct writes a struct as an object with its properties in field
// order, the fields without omitempty, omitzero or a pointer type required,
// and "additionalProperties":false: a member the struct has no field for
// would be silently dropped by the decode, so the model should hear about it.
func (in *inferrer) appendStruct(b []byte, t reflect.Type, desc string) ([]byte, error) {
	if in.expanding[t] {
		return nil, fmt.Errorf("recursive type %s: schema inference does not support recursive types; use NewRaw with $defs", t)
	}
	in.expanding[t] = true
	defer delete(in.expanding, t)

	var all []field
	if err := in.collect(t, 0, false, &all); err != nil {
		return nil, err
	}
	fields := dominant(all)

	props := []byte{'{'}
	var required []byte
	for i, f := range fields {
		if i > 0 {
			props = append(props, ',')
		}
		props, _ = jsontext.AppendQuote(props, f.name)
		props = append(props, ':')
		var err error
		if props, err = in.append(props, f.typ, f.desc, f.asString); err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", t, f.name, err)
		}
		if f.required {
			if len(required) > 0 {
				required = append(required, ',')
			}
			required, _ = jsontext.AppendQuote(required, f.name)
		}
	}
	props = append(props, '}')
	rest := `"properties":` + string(props)
	if len(required) > 0 {
		rest += `,"required":[` + string(required) + `]`
	}
	rest += `,"additionalProperties":false`
	return object(b, "object", desc, rest), nil
}

// collect lists t's JSON members in field order, flattening embedded
// structs (and `,inline` fields) at their position as encoding/json does.
func (in *inferrer) collect(t reflect.Type, depth int, optional bool, out *[]field) error {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		has := func(o string) bool {
			for _, x := range strings.Split(opts, ",") {
				if x == o {
					return true
				}
			}
			return false
		}
		ft := sf.Type
		elem := ft
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if (sf.Anonymous && name == "" || has("inline")) && elem.Kind() == reflect.Struct && special(elem) == "" {
			if !sf.IsExported() && ft.Kind() == reflect.Pointer {
				continue // encoding/json cannot set an unexported embedded pointer
			}
			if in.expanding[elem] {
				return fmt.Errorf("recursive type %s: schema inference does not support recursive types; use NewRaw with $defs", elem)
			}
			in.expanding[elem] = true
			err := in.collect(elem, depth+1, optional || ft.Kind() == reflect.Pointer, out)
			delete(in.expanding, elem)
			if err != nil {
				return err
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		tagged := name != ""
		if !tagged {
			name = sf.Name
		}
		*out = append(*out, field{
			name:     name,
			typ:      ft,
			desc:     sf.Tag.Get("jsonschema"),
			required: !optional && !has("omitempty") && !has("omitzero") && ft.Kind() != reflect.Pointer,
			asString: has("string"),
			depth:    depth,
			tagged:   tagged,
		})
	}
	return nil
}

// dominant applies Go's rule for members that share a name: the shallowest
// wins; at equal depth a single tagged one wins; otherwise all are dropped.
func dominant(all []field) []field {
	out := make([]field, 0, len(all))
	for i, f := range all {
		keep := true
		for j, g := range all {
			if i == j || g.name != f.name {
				continue
			}
			if g.depth < f.depth || g.depth == f.depth && (g.tagged == f.tagged || g.tagged) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, f)
		}
	}
	return out
}
