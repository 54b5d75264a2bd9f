//go:build unix

package main

import "syscall"

// openNonBlocking makes opening a FIFO return at once rather than wait
// for a writer (readOperatorFile refuses it next).
const openNonBlocking = syscall.O_NONBLOCK
