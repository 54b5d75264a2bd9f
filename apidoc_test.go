package wymcp_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestAPIDoc keeps docs/api.md the `go doc` of each public package, with
// the methods of its exported types: the whole public surface on one page,
// which a change to it must update (WYMCP_UPDATE_API=1 go test -run
// TestAPIDoc rewrites the page).
func TestAPIDoc(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	var b strings.Builder
	b.WriteString("# The public API\n\n" +
		"The `go doc` of each public package, with the methods of its exported types: what an\n" +
		"embedder and a tool author use, and nothing else (docs/design.md §2). Written by\n" +
		"`WYMCP_UPDATE_API=1 go test -run TestAPIDoc .`; the test fails when it is stale.\n")
	for _, pkg := range []string{".", "./tools", "./protocol", "./auth", "./upstream"} {
		short := goDoc(t, pkg)
		all := goDoc(t, "-all", pkg)
		first, _, _ := strings.Cut(short, "\n")
		_, path, _ := strings.Cut(first, "// import ")
		b.WriteString("\n## " + strings.Trim(path, `"`) + "\n\n```\n")
		b.WriteString(short)
		var methods []string
		for line := range strings.Lines(all) {
			if strings.HasPrefix(line, "func (") {
				methods = append(methods, line)
			}
		}
		if len(methods) > 0 {
			b.WriteString("\nMethods:\n" + strings.Join(methods, ""))
		}
		b.WriteString("```\n")
	}
	const path = "docs/api.md"
	if os.Getenv("WYMCP_UPDATE_API") != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("%s is stale: run WYMCP_UPDATE_API=1 go test -run TestAPIDoc .\n%s", path, firstDiff(string(got), b.String()))
	}
}

func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"doc"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go doc %q: %v", args, err)
	}
	return string(out)
}
