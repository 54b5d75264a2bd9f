//go:build unix

package opfile

import "syscall"

// openNonBlocking makes opening a FIFO return at once rather than wait
// for a writer (Read refuses it next).
const openNonBlocking = syscall.O_NONBLOCK
