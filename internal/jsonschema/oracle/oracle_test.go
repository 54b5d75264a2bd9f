package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// refuse is the loader wymcp gave santhosh: no URL is ever loaded.
type refuse struct{}

func (refuse) Load(url string) (any, error) { return nil, errors.New("refused") }

// reference compiles with santhosh as wymcp used to: 2020-12 by default,
// formats and content not asserted, nothing loaded.
func reference(raw []byte) (*santhosh.Schema, error) {
	return referenceAt(raw, "")
}

// referenceAt compiles with santhosh the schema at a JSON pointer in the
// document ("" is the root).
func referenceAt(raw []byte, ptr string) (s *santhosh.Schema, err error) {
	defer func() {
		if recover() != nil {
			s, err = nil, errPanicked
		}
	}()
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.UseLoader(refuse{})
	if err := c.AddResource(jsonschema.BaseURI, doc); err != nil {
		return nil, err
	}
	return c.Compile(jsonschema.BaseURI + "#" + (&url.URL{Fragment: ptr}).EscapedFragment())
}

// errPanicked stands for a panic of santhosh's own: it has no answer for
// the document. ("multipleOf": 1e-9999999 is one: big.Rat will not read
// the number, and santhosh compares the nil it gets.)
var errPanicked = errors.New("santhosh panicked")

// divergence says why a document santhosh compiles may be refused by
// wymcp's validator, on purpose; "" when there is no such reason.
func divergence(raw []byte, err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "supports JSON Schema 2020-12"):
		return "another dialect: santhosh also runs drafts 4 to 2019-09"
	case strings.Contains(msg, "outside this document") && bytes.Contains(raw, []byte("json-schema.org")):
		return "a reference to a standard meta-schema: santhosh embeds them"
	case strings.Contains(msg, "the exponent is too large"):
		return "a number big.Rat will not read (an exponent beyond ±1,000,000): santhosh ignores the keyword, so that \"minimum\": 1e9999999 allows every number"
	case strings.Contains(msg, "which has no hierarchy"):
		return "a relative reference against a base with no hierarchy (\"b\" against urn:example:a): santhosh resolves it to the base itself, RFC 3986 to urn:b"
	case strings.Contains(msg, "RE2") && !bytes.Contains(raw, []byte(`"pattern`)):
		return "" // santhosh compiles patternProperties' names too: no excuse
	case refusedWhenAsked(raw, msg):
		return "a schema the root never reaches: wymcp compiles every schema of the document, santhosh only those it reaches (and refuses this one when asked for it)"
	}
	return ""
}

// compileError matches wymcp's compile error for a schema; its first group
// is the quoted location, of the schema or of one of its keywords, and its
// second says which.
var compileError = regexp.MustCompile(`^schema at ("(?:[^"\\]|\\.)*"): (a schema is)?`)

// refusedWhenAsked reports whether msg is wymcp's refusal of a schema that
// santhosh refuses too when it is asked to compile that schema.
func refusedWhenAsked(raw []byte, msg string) bool {
	m := compileError.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	schema, err := strconv.Unquote(m[1])
	if err != nil {
		return false
	}
	if m[2] == "" { // a keyword's location: its schema is one up
		schema = schema[:strings.LastIndexByte(schema, '/')]
	}
	_, err = referenceAt(raw, strings.TrimPrefix(schema, "#"))
	return err != nil
}

// santhoshWrong says why santhosh's answer on a document is not to be
// trusted, against the specification; "" when it is.
func santhoshWrong(raw []byte) string {
	if doc, err := jsonschema.Decode(raw); err == nil && hugeCount(doc) {
		return "a count (\"maxLength\"...) of 2^63 or more: santhosh converts it to an int64, which wraps"
	}
	return ""
}

// counts are the keywords whose value santhosh reads as an int.
var counts = []string{"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"}

// hugeCount reports whether any object in v has a count of 2^63 or more.
func hugeCount(v any) bool {
	switch v := v.(type) {
	case []any:
		return slices.ContainsFunc(v, hugeCount)
	case map[string]any:
		for _, kw := range counts {
			n, _ := v[kw].(json.Number)
			if r, ok := new(big.Rat).SetString(string(n)); ok && r.Cmp(new(big.Rat).SetFloat64(1<<63)) >= 0 {
				return true
			}
		}
		for _, e := range v {
			if hugeCount(e) {
				return true
			}
		}
	}
	return false
}

// compare compiles one document with both and, when both compile,
// validates each instance with both. It returns a description of the
// first disagreement, or "".
func compare(raw []byte, instances [][]byte) string {
	ref, refErr := reference(raw)
	own, ownErr := jsonschema.Compile(raw)
	switch {
	case errors.Is(refErr, errPanicked), santhoshWrong(raw) != "":
		return ""
	case refErr != nil && ownErr != nil:
		return ""
	case refErr != nil:
		return fmt.Sprintf("santhosh refuses the schema (%v), wymcp compiles it", refErr)
	case ownErr != nil:
		if divergence(raw, ownErr) != "" {
			return ""
		}
		return fmt.Sprintf("wymcp refuses the schema (%v), santhosh compiles it", ownErr)
	}
	for _, inst := range instances {
		var v any
		if strictjson.Unmarshal(inst, &v) != nil {
			continue
		}
		refValid := ref.Validate(v) == nil
		failures := own.Validate(v)
		if refValid != (failures == nil) {
			return fmt.Sprintf("instance %s: santhosh valid=%v, wymcp failures=%v", inst, refValid, failures)
		}
		if own.Valid(v) != refValid {
			return fmt.Sprintf("instance %s: Valid disagrees with Validate", inst)
		}
	}
	return ""
}

// suiteCase is one schema and instances to try against it.
type suiteCase struct {
	Description string            `json:"description"`
	Schema      json.RawMessage   `json:"schema"`
	Instances   []json.RawMessage `json:"instances"`
}

func loadCases(t testing.TB) []suiteCase {
	raw, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []suiteCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestAgreesWithReference runs every case of testdata/cases.json through
// both validators: they must agree on which schemas compile and on which
// instances are valid.
func TestAgreesWithReference(t *testing.T) {
	for _, c := range loadCases(t) {
		insts := make([][]byte, len(c.Instances))
		for i, in := range c.Instances {
			insts[i] = in
		}
		if d := compare(c.Schema, insts); d != "" {
			t.Errorf("%s: %s\nschema: %s", c.Description, d, c.Schema)
		}
	}
}

// FuzzAgreesWithReference mutates schemas and instances from the cases.
func FuzzAgreesWithReference(f *testing.F) {
	for _, c := range loadCases(f) {
		for _, in := range c.Instances {
			f.Add([]byte(c.Schema), []byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, schema, instance []byte) {
		if !strictjson.Valid(schema) || len(schema) > 4096 {
			return
		}
		if d := compare(schema, [][]byte{instance}); d != "" {
			t.Fatalf("%s\nschema: %s", d, schema)
		}
	})
}
