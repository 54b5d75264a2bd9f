package wymcp_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCELInTheCore: only package policy links cel-go (docs/design.md §2,
// §11): an embedder that does not import it builds none of it.
func TestNoCELInTheCore(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".", "./tools", "./protocol", "./auth", "./upstream", "./gateway", "./opfile", "./access").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/google/cel-go") || strings.HasPrefix(p, "cel.dev/") {
			t.Errorf("a core package links %s", p)
		}
	}
}
