//go:build !unix

package opfile

// openNonBlocking is 0 where there are no FIFOs to open.
const openNonBlocking = 0
