//go:build unix

package upstream

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestStaticHeadersSpecialFiles (issue 38): a headers file that is a FIFO
// nobody writes, /dev/zero or a sparse file of 1 GiB is refused at once,
// naming the file and what is wrong, without waiting on it or reading it.
func TestStaticHeadersSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // no block written
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		fifo:        "upstream: static headers: " + fifo + " is not a regular file (a named pipe)",
		"/dev/zero": "upstream: static headers: /dev/zero is not a regular file (a character device)",
		huge:        "upstream: static headers: " + huge + " is larger than 64 KiB",
		dir:         "upstream: static headers: " + dir + " is not a regular file (a directory)",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := StaticHeaders(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v\nwant %s", path, err, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: still reading after a minute", path)
		}
	}
}
