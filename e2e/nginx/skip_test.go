package nginx

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestSkipsVisibly runs the packages that need a real component (this
// one, e2e/collector, e2e/fleet, interop/oauth/check, interop/gateway) as `go test` does without their
// variables: each must say what it skipped and which variable runs it
// (shown with -v), and its summary line must read "[no tests to run]", not
// a bare "ok" that passes for a run. It runs where the variables are set
// (CI), since without them this package runs nothing.
func TestSkipsVisibly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root := repoRoot(t)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WYMCP_E2E_") {
			env = append(env, kv)
		}
	}
	pkgs := []struct{ dir, skip string }{
		{"./e2e/nginx", "e2e/nginx: skipped: set WYMCP_E2E_NGINX=1 to run against a real nginx (.ci/install-nginx.sh installs it)"},
		{"./e2e/collector", "e2e/collector: skipped: set WYMCP_E2E_COLLECTOR=1 to run against a real OpenTelemetry Collector (the first run builds it, which takes minutes)"},
		{"./e2e/fleet", "e2e/fleet: skipped: set WYMCP_E2E_FLEET=1 to run the gateway fleet test (nginx from .ci/install-nginx.sh, server-everything from interop/gateway's npm ci)"},
		{"./interop/oauth/check", "interop/oauth/check: skipped: set WYMCP_E2E_OAUTH=1 to run against a real authorization server (interop/oauth/start.sh)"},
		{"./interop/gateway", "interop/gateway: skipped: set WYMCP_E2E_GATEWAY=1 to run against real upstream MCP servers (interop/gateway/run.sh installs them)"},
	}
	gotest := func(args ...string) string {
		cmd := exec.Command("go", append([]string{"test", "-count=1"}, args...)...)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var dirs []string
	for _, p := range pkgs {
		dirs = append(dirs, p.dir)
	}
	summary := gotest(dirs...)
	for _, p := range pkgs {
		line := regexp.MustCompile(`(?m)^ok  \tgithub\.com/wymcp/wymcp/` + regexp.QuoteMeta(strings.TrimPrefix(p.dir, "./")) + `\t\S+ \[no tests to run\]$`)
		if !line.MatchString(summary) {
			t.Errorf("go test without the variables: no %q summary line ending [no tests to run] in:\n%s", p.dir, summary)
		}
		verbose := gotest("-v", p.dir)
		if !strings.HasPrefix(verbose, p.skip+"\ntesting: warning: no tests to run\nPASS\n") {
			t.Errorf("go test -v %s:\n%s\nwant it to start with %q", p.dir, verbose, p.skip)
		}
	}
}
