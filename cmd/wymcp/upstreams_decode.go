package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// How the -upstreams file is decoded: go-yaml parses it, the tree is
// checked for what a hostile file could do, and its strict decoder fills
// the types of upstreams.go. Every error becomes one configError at the
// line and key path of the node it is about.

// Bounds of the file: a configuration, not a file given by mistake. All
// but maxItems are checked before go-yaml parses it: its parser's time
// grows much faster than the file with the nesting of [ and {, and it and
// the decoder take tens of microseconds for each line of a list, each
// mapping and each key (a 1 MiB file of them took seconds, up to minutes).
const (
	maxUpstreamsFile = 1 << 20
	maxNesting       = 64
	maxMarks         = 50_000 // [, {, :, "," and "- "
	maxLines         = 50_000
	maxItems         = 1000 // of a list
)

// configError is one thing wrong with the file: where (line 0: unknown;
// path "": the file as a whole), and what.
type configError struct {
	file, path, msg string
	line            int
}

// Error is one line, whatever a wrapped error says.
func (e *configError) Error() string {
	s := "-upstreams " + e.file + strings.TrimSuffix(":"+strconv.Itoa(e.line), ":0") + strings.TrimSuffix(": "+e.path, ": ")
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s + ": " + e.msg)
}

// errorAt is what is wrong with node n.
func errorAt(n ast.Node, msg string) *configError {
	ce := &configError{path: keyPath(n), msg: msg}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		ce.line = tk.Position.Line
	}
	return ce
}

// decodeFile decodes data, one YAML document, into v, and returns the
// line of each key path it holds; its error has no file.
func decodeFile(data []byte, v any) (lines map[string]int, ce *configError) {
	defer func() {
		// go-yaml is third-party code fed an operator's file: a panic in
		// it is a bad file, not a crash.
		if r := recover(); r != nil {
			lines, ce = nil, &configError{msg: fmt.Sprintf("cannot be read as YAML (%v)", r)}
		}
	}()
	depth, marks := 0, len(regexp.MustCompile(`[\[{:,]|-([ \t\r\n]|$)`).FindAllIndex(data, maxMarks+1)) // in strings and comments too
	for _, c := range data {
		if c == '[' || c == '{' {
			depth++
		} else if (c == ']' || c == '}') && depth > 0 {
			depth--
		}
		if depth > maxNesting || marks > maxMarks {
			return nil, &configError{msg: fmt.Sprintf("lists and mappings nest more than %d deep, or the file has more than %d of them, keys and items", maxNesting, maxMarks)}
		}
	}
	if bytes.Count(data, []byte("\n")) >= maxLines {
		return nil, &configError{msg: fmt.Sprintf("more than %d lines", maxLines)}
	}
	tree, err := parser.ParseBytes(data, 0)
	if loc := regexp.MustCompile(`(?m)^ *\t`).FindIndex(data); err != nil && loc != nil {
		// The parser's word for it is a tab, quoted, which reads as a space.
		return nil, &configError{line: bytes.Count(data[:loc[0]], []byte("\n")) + 1, msg: "not valid YAML: a tab in the indentation; YAML indents with spaces"}
	} else if err != nil {
		ce = translate(nil, err)
		ce.msg = "not valid YAML: " + ce.msg
		return nil, ce
	}
	docs := slices.DeleteFunc(tree.Docs, func(d *ast.DocumentNode) bool { return d == nil || d.Body == nil })
	if len(docs) == 0 {
		return nil, &configError{path: "upstreams", msg: "missing (the file is empty; write upstreams: [] for none)"}
	} else if len(docs) > 1 {
		return nil, errorAt(docs[1].Body, "holds a second YAML document; write one")
	}
	// Each token's key path, and each key path's line.
	paths, lines := map[*token.Token]string{}, map[string]int{}
	ast.Walk(visitor(func(n ast.Node) {
		switch n := n.(type) {
		case *ast.SequenceNode:
			if len(n.Values) > maxItems {
				ce = cmp.Or(ce, errorAt(n, fmt.Sprintf("%d items, more than %d", len(n.Values), maxItems)))
			}
		case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode, *ast.TagNode:
			// An alias repeats what it names without its bytes (a file of
			// kilobytes could stand for billions of strings); go-yaml's
			// decoder panics on some tags.
			ce = cmp.Or(ce, errorAt(n, "anchors, aliases, merge keys (<<) and tags are not supported: write each value out"))
		}
		tk, p := n.GetToken(), keyPath(n)
		if _, seen := paths[tk]; !seen {
			paths[tk] = p
		}
		if _, seen := lines[p]; !seen && tk.Position != nil {
			lines[p] = tk.Position.Line
		}
	}), docs[0].Body)
	if ce != nil {
		return nil, ce
	} else if err := yaml.NodeToValue(docs[0].Body, v, yaml.Strict()); err != nil {
		return nil, translate(paths, err)
	}
	return lines, nil
}

type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if n != nil && n.GetToken() != nil {
		v(n)
	}
	return v
}

// translate is err, a decoding error, as a configError: one of ours as
// it is, go-yaml's at its token's line and key path (paths: the tree's, by
// token), in its words but for a TypeError's, which name Go types.
func translate(paths map[*token.Token]string, err error) (ce *configError) {
	var ye yaml.Error
	var te *yaml.TypeError
	if errors.As(err, &ce) {
		return ce
	} else if !errors.As(err, &ye) {
		return &configError{msg: "cannot be read"}
	}
	// Not its Error(), which quotes the source in a time that grows with
	// the square of a line's tokens.
	ce, tk := &configError{msg: ye.GetMessage()}, ye.GetToken()
	if tk == nil || tk.Position == nil {
		return ce
	}
	ce.line = tk.Position.Line
	p, ok := paths[tk]
	switch {
	case !ok:
	case errors.As(err, new(*yaml.UnknownFieldError)):
		ce.path, ce.msg = p, "unknown key"
	case errors.As(err, &te):
		ce.path, ce.msg = p, "want "+cmp.Or(map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false"}[te.DstType.Kind()], te.DstType.String())
	default:
		ce.path = p
	}
	return ce
}

// keyPath is n's key path, upstreams[0].url ("" for the file): go-yaml's,
// which quotes a key holding '.' or '*'.
func keyPath(n ast.Node) string {
	return strings.TrimPrefix(strings.TrimPrefix(n.GetPath(), "$"), ".")
}

// keyChild is the path of key below p, as keyPath writes it.
func keyChild(p, key string) string {
	if strings.ContainsAny(key, ".*") || key == "" {
		key = "'" + strings.ReplaceAll(key, "'", `\'`) + "'"
	}
	return strings.TrimPrefix(p+"."+key, ".")
}

// count is an integer of at least 1 (and at most 2^53, a JSON number).
// It and duration refuse a value of another YAML type: go-yaml alone
// turns "64" into 64, 1.5 into 1.
type count int64

func (c *count) UnmarshalYAML(n ast.Node) error {
	v, ok := n.(*ast.IntegerNode)
	if !ok {
		return errorAt(n, "want an integer")
	}
	i, _ := v.Value.(int64)
	if u, ok := v.Value.(uint64); ok {
		i = int64(min(u, 1<<53+1))
	}
	switch {
	case i > 1<<53:
		return errorAt(n, v.Token.Value+" is too large")
	case i < 1:
		return errorAt(n, fmt.Sprintf("%d must be at least 1", i))
	}
	*c = count(i)
	return nil
}

// duration is a Go duration, with its unit ("30s", "1m30s"), or 0.
type duration time.Duration

func (d *duration) UnmarshalYAML(n ast.Node) error {
	s, ok := n.(*ast.StringNode)
	if n.Type() == ast.IntegerType && n.GetToken().Value == "0" {
		s, ok = &ast.StringNode{Value: "0s"}, true
	}
	if !ok {
		return errorAt(n, "want a duration such as 30s")
	}
	v, err := time.ParseDuration(s.Value)
	if err != nil {
		return errorAt(n, fmt.Sprintf("%q is not a duration: write a number and a unit, such as 30s or 1m30s", s.Value))
	}
	*d = duration(v)
	return nil
}

// refused is a key that would write a secret in the file.
type refused struct{}

func (refused) UnmarshalYAML(n ast.Node) error {
	return errorAt(n, "secrets are never written in this file: put the secret in a file and name it with clientSecretFile")
}
