// Package cleartext decides, on a URL's text alone, whether what is sent
// to it travels unencrypted to another machine: the one rule the gateway's
// credentials are checked by, in the library (upstream.Connect) and in the
// binary's file reader (cmd/wymcp), so that both refuse the same URLs.
package cleartext

import (
	"net"
	"net/url"
	"strings"
)

// Remote reports whether raw is an http URL whose host is not loopback:
// not localhost, nor an address of 127.0.0.0/8 or ::1. A name other than
// localhost counts as remote whatever it resolves to: the decision is made
// on the text, never by resolving it (a check at configuration time must
// not send a packet).
func Remote(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
