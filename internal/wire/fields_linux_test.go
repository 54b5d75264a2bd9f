//go:build linux

package wire

import (
	"errors"
	"math"
	"syscall"
	"testing"
)

// TestBodyPastSpans: a body longer than a span can index is refused, not
// read with offsets that wrap. The body is mapped, not allocated: only its
// first page is ever touched.
func TestBodyPastSpans(t *testing.T) {
	n := uint64(maxSpanBody) + 1
	if n > math.MaxInt {
		t.Skip("int cannot hold the length")
	}
	body, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		t.Skipf("cannot map %d bytes: %v", n, err)
	}
	defer syscall.Munmap(body)
	body[0] = '{'
	if fitsSpans(body) || !fitsSpans(body[:maxSpanBody]) {
		t.Fatal("fitsSpans draws the line in the wrong place")
	}
	var f fields
	if err := scan(new(scanner), body, &f); !errors.Is(err, errBodyTooLong) || f.body != nil {
		t.Errorf("scan: %v", err)
	}
	if err := scanParams(body, &f); !errors.Is(err, errBodyTooLong) || f.body != nil {
		t.Errorf("scanParams: %v", err)
	}
	if _, _, perr := Parse(body); perr != errParse {
		t.Errorf("Parse: %v", perr)
	}
	if _, perr := ParseRequest(Message{Kind: KindRequest, Method: MethodToolsList, Params: body}); perr == nil || perr.Code != CodeInvalidParams {
		t.Errorf("ParseRequest: %v", perr)
	}
}
