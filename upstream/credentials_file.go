package upstream

import (
	"fmt"
	"io"
	"os"
)

// readCredentialFile reads a file of credentials: a regular file of at
// most max bytes. It opens without blocking (a FIFO opens at once, and is
// then refused), refuses anything but a regular file (a FIFO, /dev/zero,
// a directory) before reading a byte, and never reads past max, so that a
// wrong path can neither hang Connect's caller nor fill its memory. Its
// errors are an *fs.PathError, which names the file, or say what is wrong
// with the file without naming it.
func readCredentialFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (mode %s)", fi.Mode().Type())
	}
	tooLarge := fmt.Errorf("larger than %d KiB", max>>10)
	if fi.Size() > max {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, tooLarge // it grew since Stat
	}
	return data, nil
}
