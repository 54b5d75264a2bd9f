package wymcp_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzTargetsRun: every fuzz target of the repository is one that
// .ci/fuzz.sh runs (a target left out is fuzzed by nobody), and
// docs/operations.md counts them.
func TestFuzzTargetsRun(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile(".ci/fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"(\S+) (Fuzz\w+)"$`).FindAllStringSubmatch(string(script), -1) {
		listed = append(listed, filepath.Join(m[1], m[2]))
	}
	var found []string
	target := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range target.FindAllStringSubmatch(string(b), -1) {
			found = append(found, filepath.Join(filepath.Dir(p), m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	slices.Sort(found)
	if !slices.Equal(listed, found) {
		t.Errorf(".ci/fuzz.sh runs %v\nthe repository has %v", listed, found)
	}
	ops, err := os.ReadFile("docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range found {
		if !strings.Contains(string(ops), "`"+filepath.Base(name)+"`") {
			t.Errorf("docs/operations.md does not name %s", filepath.Base(name))
		}
	}
}
