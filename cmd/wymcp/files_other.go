//go:build !unix

package main

// openNonBlocking is 0 where there are no FIFOs to open.
const openNonBlocking = 0
