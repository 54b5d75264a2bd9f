//go:build !linux

package main

import (
	"net"
	"time"
)

// quiesce is a no-op where a listener's accept queue cannot be read (see
// listener_linux.go): the listener closes as it is.
func quiesce(net.Listener, time.Duration) {}
