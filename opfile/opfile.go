// Package opfile reads the files an operator names (secrets, key rings,
// configuration) the one way: bounded, never blocking, regular files only.
// The library (upstream.StaticHeaders) and the server binary read them
// through it, so that the rule has one owner; it is public because the
// binary is a module of its own and imports no internal package of the
// library's, and an embedder reading its own secrets gets the same rule.
package opfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Read reads a file the operator names (a secret, a key ring, a
// configuration): a regular file of at most max bytes. It opens without
// blocking (a FIFO opens at once, and is then refused), refuses anything
// but a regular file (a FIFO, /dev/zero, a directory) before reading a
// byte, and never reads past max, so that a wrong path can neither hang
// the process, at start or on a reload, nor fill its memory. Its errors
// name the file; the caller adds what named it.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err // *fs.PathError: "open <path>: <why>"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fileKind(fi.Mode()))
	}
	tooLarge := fmt.Errorf("%s is larger than %d KiB", path, max>>10)
	if fi.Size() > max {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge // it grew since Stat
	}
	return data, nil
}

// fileKind names what a file that is not a regular one is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.Type().String()
}
