package main

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// quiesce prepares a TCP listener for closing without resetting the
// connections in its accept queue. Closing a listening socket resets every
// connection the kernel has accepted but the program has not, and a proxy
// may already have sent a call on one: nginx, behind which each call to a
// draining replica opens a new connection, reports "Connection reset by
// peer" and answers 502 (deploy/nginx/README.md counts the calls lost
// that way). So, before the close:
//
//   - the backlog shrinks to 0 (listen(2) again on the listening socket):
//     while a connection waits in the queue, the kernel drops new SYNs, and
//     their senders retry one second later, by then to a closed port, which
//     refuses them (a refused connection carried nothing: nginx resends the
//     call elsewhere);
//   - the queue is left to empty: http.Server.Serve is still accepting, and
//     what it accepts it serves (each answer with Connection: close).
//
// The close follows at once. What can still be reset is a connection that
// completes its handshake in that instant, against a whole queue before.
// TCP_INFO's tcpi_unacked is a listening socket's queue length (Linux).
func quiesce(l net.Listener, bound time.Duration) {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) { _ = unix.Listen(int(fd), 0) })
	queued := func() uint32 {
		n := uint32(0)
		_ = rc.Control(func(fd uintptr) {
			if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
				n = info.Unacked
			}
		})
		return n
	}
	for deadline := time.Now().Add(bound); queued() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
}
