package wymcp_test

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// publicPackages are the library's public packages, in docs/api.md's
// order; TestAPIDoc fails when the module holds one more (or one fewer).
var publicPackages = []string{".", "./tools", "./protocol", "./auth", "./upstream", "./opfile", "./gateway", "./access", "./policy"}

// TestAPIDoc keeps docs/api.md the `go doc` of each public package, with
// the methods of its exported types, and every exported name counted: the
// whole public surface on one page, which a change to it must update
// (WYMCP_UPDATE_API=1 go test -run TestAPIDoc . rewrites the page; with -v
// it logs the count per package). A name added to a const block or a new
// public package fails it too.
func TestAPIDoc(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	checkPublicPackages(t)
	var b, counts strings.Builder
	total := 0
	for _, pkg := range publicPackages {
		short := goDoc(t, pkg)
		all := goDoc(t, "-all", pkg)
		first, _, _ := strings.Cut(short, "\n")
		_, path, _ := strings.Cut(first, "// import ")
		path = strings.Trim(path, `"`)
		names := exportedNames(t, pkg)
		total += len(names)
		fmt.Fprintf(&counts, "| `%s` | %d |\n", path, len(names))
		b.WriteString("\n## " + path + "\n\n```\n")
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
		b.WriteString("```\n\nExported names (" + fmt.Sprint(len(names)) + "): `" + strings.Join(names, "`, `") + "`.\n")
	}
	fmt.Fprintf(&counts, "| all | %d |\n", total)
	t.Logf("exported names per package:\n%s", counts.String())
	page := "# The public API\n\n" +
		"The `go doc` of each public package, with the methods of its exported types: what an\n" +
		"embedder and a tool author use, and nothing else (docs/design.md §2). Written by\n" +
		"`WYMCP_UPDATE_API=1 go test -run TestAPIDoc .`; the test fails when it is stale.\n" +
		"Exported names are counted with go/ast: the top-level names and the methods of exported types.\n\n" +
		"| package | exported names |\n| --- | --- |\n" + counts.String() + b.String()
	const path = "docs/api.md"
	if os.Getenv("WYMCP_UPDATE_API") != "" {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != page {
		t.Errorf("%s is stale: run WYMCP_UPDATE_API=1 go test -run TestAPIDoc .\n%s", path, firstDiff(string(got), page))
	}
}

// checkPublicPackages fails unless publicPackages are exactly the
// module's packages that are neither internal nor commands.
func checkPublicPackages(t *testing.T) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/wymcp/wymcp"
	var found []string
	for line := range strings.Lines(string(out)) {
		name, path, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name == "main" || strings.Contains(path+"/", "/internal/") {
			continue
		}
		found = append(found, "."+strings.TrimPrefix(path, module)) // ".", "./tools"
	}
	want := slices.Clone(publicPackages)
	slices.Sort(found)
	slices.Sort(want)
	if !slices.Equal(found, want) {
		t.Fatalf("the module's public packages are %q; publicPackages lists %q (a public package is listed in docs/api.md)", found, want)
	}
}

// exportedNames are the exported names of the package in dir (build tags
// of this platform, tests aside), sorted: its exported top-level names,
// and Type.Method for the exported methods of its exported types.
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, file := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names = append(names, d.Name.Name)
				} else if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
					names = append(names, recv+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// receiverType is the name of a method's receiver type: T of T, *T, T[P]
// and *T[P].
func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"doc"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go doc %q: %v", args, err)
	}
	return string(out)
}
