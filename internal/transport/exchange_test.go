package transport

import (
	"testing"
	"unsafe"
)

// TestExchangeSize: every request past stage 2 allocates one exchange, so
// its size class is paid per request; a field that pushes it past the
// 448-byte class costs every request 32 bytes more. Growing it is a choice
// to make knowingly (bench/README.md has the allocation figures).
func TestExchangeSize(t *testing.T) {
	if n := unsafe.Sizeof(exchange{}); n > 448 {
		t.Errorf("exchange is %d bytes, past the 448-byte size class", n)
	}
}
