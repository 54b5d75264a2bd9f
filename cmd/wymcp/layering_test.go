package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// libraryInternal is the prefix of the library's internal packages.
const libraryInternal = "github.com/wymcp/wymcp/internal/"

// pendingInternal are the imports of the library's internal packages still
// in the binary, by file, each with the change that removes it: the test
// fails when one is gone and still listed, so that the list only shrinks.
var pendingInternal = map[string]string{}

// TestNoLibraryInternals: the binary is a module of its own and a thin
// shell over the library's public API (docs/design.md §2): none of its
// code (tests aside, build tags ignored) imports an internal package of the
// library's, so that what it needs is public, or its own.
func TestNoLibraryInternals(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil || !strings.HasPrefix(p, libraryInternal) {
				continue
			}
			key := filepath.ToSlash(path) + " " + p
			if _, ok := pendingInternal[key]; ok {
				seen[key] = true
				continue
			}
			t.Errorf("%s imports %s: the binary uses the library's public API only (make what it needs public, or the binary's own)", path, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, why := range pendingInternal {
		if !seen[key] {
			t.Errorf("pendingInternal lists %q (%s), which is no longer imported: remove it from the list", key, why)
		}
	}
}
