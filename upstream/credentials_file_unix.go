//go:build unix

package upstream

import "syscall"

// openNonBlocking makes opening a FIFO return at once rather than wait
// for a writer (readCredentialFile refuses it next).
const openNonBlocking = syscall.O_NONBLOCK
