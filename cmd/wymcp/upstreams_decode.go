package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// How the -upstreams file is decoded: go-yaml parses it, the parse tree
// is checked for what a hostile file could do, and go-yaml's strict
// decoder (unknown and repeated keys refused) fills the file's types,
// whose integers and durations refuse a value of another YAML type
// (go-yaml alone turns "64" into 64, 1.5 into 1). Every error becomes one
// configError at the line and key path of the node it is about.

// Bounds of the file's shape, the first three checked before go-yaml
// parses it: its parser's time grows much faster than the file with the
// nesting of [ and {, and it and the decoder take tens of microseconds for
// each line of a list, each mapping and each key (a 1 MiB file of them
// took seconds, up to minutes).
const (
	maxNesting = 64
	maxMarks   = 50_000 // [, {, :, "," and "- "
	maxLines   = 50_000
	maxItems   = 1000 // of a list
)

// configError is one thing wrong with the file: where (line 0: unknown;
// path "": the file as a whole), and what.
type configError struct {
	file, path, msg string
	line            int
}

func (e *configError) Error() string {
	s := "-upstreams " + e.file
	if e.line > 0 {
		s += ":" + strconv.Itoa(e.line)
	}
	if e.path != "" {
		s += ": " + e.path
	}
	// One line, whatever a wrapped error says.
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s + ": " + e.msg)
}

// decodeFile decodes data, one YAML document, into v, and returns the
// line of each key path it holds.
func decodeFile(file string, data []byte, v any) (lines map[string]int, err error) {
	fail := func(line int, msg string) error { return &configError{file: file, line: line, msg: msg} }
	defer func() {
		// go-yaml is third-party code fed an operator's file: a panic in
		// it is a bad file, not a crash.
		if r := recover(); r != nil {
			lines, err = nil, fail(0, fmt.Sprintf("cannot be read as YAML (%v)", r))
		}
	}()
	depth, marks := 0, 0 // in strings and comments too
	for i, c := range data {
		if c == '[' || c == '{' {
			depth++
		} else if (c == ']' || c == '}') && depth > 0 {
			depth--
		}
		if strings.IndexByte("[{:,", c) >= 0 || (c == '-' && (i+1 == len(data) || strings.IndexByte(" \t\r\n", data[i+1]) >= 0)) {
			marks++
		}
		if depth > maxNesting || marks > maxMarks {
			return nil, fail(0, fmt.Sprintf("lists and mappings nest more than %d deep, or the file has more than %d of them, keys and items", maxNesting, maxMarks))
		}
	}
	if bytes.Count(data, []byte("\n")) >= maxLines {
		return nil, fail(0, fmt.Sprintf("more than %d lines", maxLines))
	}
	tree, err := parser.ParseBytes(data, 0)
	if loc := regexp.MustCompile(`(?m)^ *\t`).FindIndex(data); err != nil && loc != nil {
		// The parser's word for it is a tab, quoted, which reads as a space.
		return nil, fail(bytes.Count(data[:loc[0]], []byte("\n"))+1, "not valid YAML: a tab in the indentation; YAML indents with spaces")
	} else if err != nil {
		ce := translate(file, nil, err)
		return nil, fail(ce.line, "not valid YAML: "+ce.msg)
	}
	var docs []ast.Node
	for _, doc := range tree.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc.Body)
		}
	}
	if len(docs) == 0 {
		return nil, &configError{file: file, path: "upstreams", msg: "missing (the file is empty; write upstreams: [] for none)"}
	} else if len(docs) > 1 {
		return nil, translate(file, nil, &nodeError{docs[1], "holds a second YAML document; write one"})
	}
	// Each token's node, for its key path, and each key path's line.
	nodes, lines := map[*token.Token]ast.Node{}, map[string]int{}
	ast.Walk(visitor(func(n ast.Node) {
		switch n := n.(type) {
		case *ast.SequenceNode:
			if len(n.Values) > maxItems {
				err = cmp.Or(err, error(&nodeError{n, fmt.Sprintf("%d items, more than %d", len(n.Values), maxItems)}))
			}
		case *ast.AnchorNode, *ast.AliasNode, *ast.MergeKeyNode, *ast.TagNode:
			// An alias repeats what it names without its bytes (a file of
			// kilobytes could stand for billions of strings); go-yaml's
			// decoder panics on some tags.
			err = cmp.Or(err, error(&nodeError{n, "anchors, aliases, merge keys (<<) and tags are not supported: write each value out"}))
		}
		if _, seen := nodes[n.GetToken()]; !seen {
			nodes[n.GetToken()] = n
		}
		if _, seen := lines[keyPath(n)]; !seen && n.GetToken().Position != nil {
			lines[keyPath(n)] = n.GetToken().Position.Line
		}
	}), docs[0])
	if err == nil {
		err = yaml.NodeToValue(docs[0], v, yaml.Strict())
	}
	if err != nil {
		return nil, translate(file, nodes, err)
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

// nodeError is what is wrong with a node.
type nodeError struct {
	n   ast.Node
	msg string
}

func (e *nodeError) Error() string { return e.msg }

// translate is a decoding error, go-yaml's or a nodeError, as a
// configError at its node's line and key path (nodes: the tree's, by
// token). go-yaml's words are kept but for a TypeError's, which name Go
// types and the file's types' fields.
func translate(file string, nodes map[*token.Token]ast.Node, err error) *configError {
	ce, tk := &configError{file: file, msg: "cannot be read"}, (*token.Token)(nil)
	var (
		ne *nodeError
		ye yaml.Error
		te *yaml.TypeError
	)
	if errors.As(err, &ne) {
		tk, ce.msg, nodes = ne.n.GetToken(), ne.msg, map[*token.Token]ast.Node{ne.n.GetToken(): ne.n}
	} else if errors.As(err, &ye) {
		// Not its Error(), which quotes the source in a time that grows
		// with the square of a line's tokens.
		tk, ce.msg = ye.GetToken(), ye.GetMessage()
	}
	if tk == nil || tk.Position == nil {
		return ce
	}
	ce.line = tk.Position.Line
	n := nodes[tk]
	if n == nil {
		return ce
	}
	ce.path = keyPath(n)
	if errors.As(err, new(*yaml.UnknownFieldError)) {
		ce.msg = "unknown key"
	} else if errors.As(err, &te) {
		ce.msg = "want " + cmp.Or(map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false"}[te.DstType.Kind()], te.DstType.String())
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

// lineOf is the line of key path p, or of the nearest path above it that
// the file holds (that of a mapping, for a key missing from it).
func lineOf(lines map[string]int, p string) int {
	for {
		if l, ok := lines[p]; ok || p == "" {
			return l
		}
		p = p[:max(strings.LastIndexAny(p, ".["), 0)]
	}
}

// count is an integer of at least 1 (and at most 2^53, a JSON number).
type count int64

func (c *count) UnmarshalYAML(n ast.Node) error {
	v, ok := n.(*ast.IntegerNode)
	if !ok {
		return &nodeError{n, "want an integer"}
	}
	i, _ := v.Value.(int64)
	if u, big := v.Value.(uint64); big {
		i = int64(min(u, 1<<53+1))
	}
	switch {
	case i > 1<<53:
		return &nodeError{n, v.Token.Value + " is too large"}
	case i < 1:
		return &nodeError{n, fmt.Sprintf("%d must be at least 1", i)}
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
		return &nodeError{n, "want a duration such as 30s"}
	}
	v, err := time.ParseDuration(s.Value)
	if err != nil {
		return &nodeError{n, fmt.Sprintf("%q is not a duration: write a number and a unit, such as 30s or 1m30s", s.Value)}
	}
	*d = duration(v)
	return nil
}

// refused is a key that would write a secret in the file.
type refused struct{}

func (refused) UnmarshalYAML(n ast.Node) error {
	return &nodeError{n, "secrets are never written in this file: put the secret in a file and name it with clientSecretFile"}
}
