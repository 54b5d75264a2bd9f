package jsonschema

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// maxShown bounds a schema value quoted in a message ("want one of …").
const maxShown = 120

// plural writes "1 item", "2 items"; "property" becomes "properties".
func plural(n int, noun string) string {
	if n != 1 {
		if strings.HasSuffix(noun, "y") {
			noun = noun[:len(noun)-1] + "ies"
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}

// containsMatched writes "1 item matches the 'contains' schema", "2 items
// match …".
func containsMatched(n int) string {
	verb := " match"
	if n == 1 {
		verb = " matches"
	}
	return plural(n, "item") + verb + " the 'contains' schema"
}

// names writes "property 'a'" or "properties 'a', 'b'".
func names(list []string, one, many string) string {
	word := one
	if len(list) > 1 {
		word = many
	}
	return word + " '" + strings.Join(list, "', '") + "'"
}

// kindList writes a set of types: "string", "object or null".
func kindList(ks kinds) string {
	var parts []string
	for _, kn := range kindNames {
		if ks&kn.kind != 0 && !(kn.kind == kindInteger && ks&kindNumber != 0) {
			parts = append(parts, kn.name)
		}
	}
	return strings.Join(parts, " or ")
}

// show writes a schema value as JSON, cut to maxShown bytes.
func show(v any) string {
	b, err := strictjson.Marshal(plain(v))
	if err != nil {
		return "(a value)"
	}
	s := string(b)
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// plain turns a normalized schema value back into one that marshals as
// written.
func plain(v any) any {
	switch v := v.(type) {
	case *number:
		return rawNumber(v.text)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = plain(e)
		}
		return out
	}
	return v
}

// rawNumber marshals as the number's text.
type rawNumber string

func (r rawNumber) MarshalJSON() ([]byte, error) { return []byte(r), nil }
