package upstream

import (
	"errors"
	"net"
	"net/http"
	"testing"
)

// A refused connection never carried the request: it is unsent, so the
// call may go again on a fresh connection whatever the tool; any other
// error may have carried it.
func TestUnsent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = http.Post("http://"+addr+"/", "application/json", nil)
	if err == nil || !unsent(err) {
		t.Errorf("a refused connection: %v, unsent %v", err, err != nil && unsent(err))
	}
	if unsent(errors.New("read: connection reset by peer")) {
		t.Error("a reset counted as unsent")
	}
	if unsent(&net.OpError{Op: "read", Err: errors.New("reset")}) {
		t.Error("a read error counted as unsent")
	}
}

// The budget starts full, gives its burst, then a fifth of a retry per
// call.
func TestRetriesBudget(t *testing.T) {
	r := newRetries(true, 40)
	n := 0
	for r.take() {
		n++
	}
	if n != 10 {
		t.Fatalf("burst %d, want 10", n)
	}
	for range 5 {
		r.called()
	}
	if !r.take() || r.take() {
		t.Fatal("five calls did not make exactly one retry")
	}
	for range 1000 {
		r.called()
	}
	n = 0
	for r.take() {
		n++
	}
	if n != 10 {
		t.Fatalf("refilled to %d, want the burst, 10", n)
	}
	off := newRetries(false, 40)
	if off.take() {
		t.Fatal("a disabled budget gave a retry")
	}
}
