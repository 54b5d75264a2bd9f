package wymcp_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// goBlocks returns the contents of the ```go blocks of a Markdown file.
func goBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(b)) {
		switch {
		case cur == nil && strings.TrimRight(line, "\n") == "```go":
			cur = new(strings.Builder)
		case cur != nil && strings.TrimRight(line, "\n") == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	if cur != nil {
		t.Fatalf("%s: a ```go block is not closed", path)
	}
	return blocks
}

// TestREADMEEmbedExample keeps the README's embedding example, a whole
// program, the same file as examples/embed/main.go, which go test
// runs there (its Example serves on a free port, calls, and stops).
func TestREADMEEmbedExample(t *testing.T) {
	const path = "examples/embed/main.go"
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var programs []string
	for _, b := range goBlocks(t, "README.md") {
		if strings.Contains(b, "\npackage main\n") || strings.HasPrefix(b, "package main\n") {
			programs = append(programs, b)
		}
	}
	if len(programs) != 1 {
		t.Fatalf("README.md has %d Go blocks of package main, want 1 (the embedding example)", len(programs))
	}
	if got := programs[0]; got != string(want) {
		t.Errorf("README.md's embedding example differs from %s; copy the file into the README:\n%s",
			path, firstDiff(got, string(want)))
	}
}

// TestDocsToolsExamples keeps each Go block of docs/tools.md a piece of
// example_test.go, which go test runs (Example_askForInput): the block's
// lines, indented one tab as in the Example's body, appear there in order.
func TestDocsToolsExamples(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlocks(t, "docs/tools.md")
	if len(blocks) == 0 {
		t.Fatal("docs/tools.md has no Go block")
	}
	for i, b := range blocks {
		var indented strings.Builder
		for line := range strings.Lines(b) {
			if line != "\n" {
				indented.WriteString("\t")
			}
			indented.WriteString(line)
		}
		if !strings.Contains(string(src), indented.String()) {
			t.Errorf("docs/tools.md's Go block %d is not in example_test.go:\n%s", i+1, b)
		}
	}
}

// firstDiff names the first line at which got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  README: " + gl + "\n  file:   " + wl
		}
	}
	return "(no line differs)"
}
