package opfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCaps: a file at its cap is read; one byte more is
// refused, naming the file and the cap.
func TestReadCaps(t *testing.T) {
	t.Parallel()
	const max = 64 << 10
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(strings.Repeat("s", max)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(p, max); err != nil || len(b) != max {
		t.Fatalf("at the cap: %d bytes, %v", len(b), err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("s", max+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p, max); err == nil || err.Error() != p+" is larger than 64 KiB" {
		t.Fatalf("past the cap: %v", err)
	}
	if _, err := Read(filepath.Dir(p), max); err == nil || err.Error() != filepath.Dir(p)+" is not a regular file (a directory)" {
		t.Fatalf("a directory: %v", err)
	}
}
