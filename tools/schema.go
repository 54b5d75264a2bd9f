package tools

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL is the base URL every tool schema is compiled under. It names
// nothing that can be loaded: a relative `$ref` resolves against it to
// another wymcp: URL, which refuseLoader refuses like any other. It is
// hierarchical on purpose: against an opaque base such as "urn:x" the
// library resolved "other.json" to the document itself, silently.
const schemaURL = "wymcp:///tool-schema.json"

// maxMessage caps the text that describes failed validation (~1 KiB), so an
// argument with thousands of bad items cannot make a megabyte answer.
const maxMessage = 1024

// printer renders validation errors. message.Printer is safe for concurrent
// use; LocalizedString(nil) would panic, hence a real one.
var printer = message.NewPrinter(language.English)

// refuseLoader refuses every URL. The library's default FileLoader reads
// local files, so `"$ref":"file:///etc/passwd"` would read that file at
// compile time; DESIGN §6 says no `$ref` is ever fetched, from anywhere.
// The draft meta-schemas are embedded in the library and never reach it.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema references %q: wymcp never loads external schemas (DESIGN §6)", url)
}

// compile compiles one tool schema document, once, at construction. The
// document must be strict JSON (no duplicate names: a client and this
// validator must read the same schema) with an object root; an input
// schema's root must also say "type":"object" (MCP requires it of inputs;
// since 2026-07-28 an output schema may describe any JSON value).
func compile(raw []byte, input bool) (*jsonschema.Schema, error) {
	if !jsontext.Value(raw).IsValid() {
		return nil, errors.New("not a single strict JSON value (duplicate names and invalid UTF-8 are refused)")
	}
	// UnmarshalJSON keeps numbers as json.Number, so "maximum": 2^63 stays exact.
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
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
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// validate validates a decoded instance and returns "" when it is valid,
// else the short message: every leaf error as `at '/path': what`, joined by
// "; ", in the library's order, capped at maxMessage.
func validate(s *jsonschema.Schema, instance any) string {
	err := s.Validate(instance)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		// Validate only returns *ValidationError today; keep a fixed text
		// should that change rather than leak whatever it becomes.
		return "arguments do not match the schema"
	}
	var b strings.Builder
	seen := map[string]bool{}
	leaves(ve, &b, seen)
	return capText(b.String())
}

// leaves appends each leaf of the error tree once. The inner nodes
// ("allOf failed", "$ref") only say that a child failed; the leaves say why.
func leaves(e *jsonschema.ValidationError, b *strings.Builder, seen map[string]bool) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			leaves(c, b, seen)
			if b.Len() > maxMessage {
				return
			}
		}
		return
	}
	line := "at '" + pointer(e.InstanceLocation) + "': " + e.ErrorKind.LocalizedString(printer)
	if seen[line] {
		return
	}
	seen[line] = true
	if b.Len() > 0 {
		b.WriteString("; ")
	}
	b.WriteString(line)
}

// pointer renders an instance location as an RFC 6901 JSON pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
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
