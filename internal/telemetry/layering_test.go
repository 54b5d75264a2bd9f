package telemetry

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoServerConfig: telemetry observes and is handed what it records to
// (Options); it does not depend, even through another package, on the
// server's configuration (internal/config), which would tie every user of
// the package (upstream's hops and failures among them) to the server's
// settings (docs/design.md §2).
func TestNoServerConfig(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for dep := range strings.Lines(string(out)) {
		if strings.TrimSpace(dep) == "github.com/wymcp/wymcp/internal/config" {
			t.Fatal("internal/telemetry depends on internal/config")
		}
	}
}
