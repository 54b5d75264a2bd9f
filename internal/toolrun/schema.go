package toolrun

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/jsonschema"
)

// maxMessage caps the text that describes failed validation (~1 KiB), so an
// argument with thousands of bad items cannot make a megabyte answer.
const maxMessage = 1024

// compile compiles one tool schema document, once, at construction, with
// wymcp's JSON Schema 2020-12 validator (internal/jsonschema: strict JSON,
// nothing ever fetched). The root must be an object; an input schema's root
// must also say "type":"object" (MCP requires it of inputs; since
// 2026-07-28 an output schema may describe any JSON value).
func compile(raw []byte, input bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.Decode(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("root is not a JSON object")
	}
	if typ, _ := obj["type"].(string); input && typ != "object" {
		return nil, errors.New(`root must have "type":"object"`)
	}
	return jsonschema.CompileValue(doc)
}

// validate validates a decoded instance and returns "" when it is valid,
// else the short message: every failure as `at '/path': what`, joined by
// "; ", in the validator's order, capped at maxMessage.
func validate(s *jsonschema.Schema, instance any) string {
	failures := s.Validate(instance)
	if failures == nil {
		return ""
	}
	var b strings.Builder
	seen := make(map[jsonschema.Failure]bool, len(failures))
	for _, f := range failures {
		if seen[f] {
			continue // anyOf's branches may fail the same way
		}
		seen[f] = true
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("at '" + f.Path + "': " + f.Message)
		if b.Len() > maxMessage {
			break
		}
	}
	return capText(b.String())
}

// capText cuts s to at most maxMessage bytes on a rune boundary, marking
// the cut with "…".
func capText(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
