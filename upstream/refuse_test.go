//go:build unix

package upstream_test

import (
	"net"
	"net/http/httptest"
	"syscall"
	"testing"
)

// refuse closes srv and keeps its port bound, without listening, until
// the test ends: a connection to it is refused for the whole test. A port
// merely closed can be taken by another test's listener in the meantime,
// and the call meant to be refused is then answered by that server.
func refuse(t testing.TB, srv *httptest.Server) {
	t.Helper()
	addr := srv.Listener.Addr().(*net.TCPAddr)
	srv.Close()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	// The closed server's connections may linger in TIME_WAIT on the port.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		t.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	if err := syscall.Bind(fd, sa); err != nil {
		t.Fatalf("holding the closed port %d: %v (another listener took it in the instant it was free)", addr.Port, err)
	}
}
