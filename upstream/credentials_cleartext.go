package upstream

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// checkCleartext refuses, before any connection, credentials that would
// travel unencrypted to another machine: an upstream URL or a token
// endpoint that is plain http to a host that is not loopback, when the
// upstream has credentials (the gateway's secret, and for an exchange the
// caller's token, would be readable on the way), unless
// Options.AllowCleartextCredentials says the operator knows (a network
// that is encrypted underneath, a sidecar). It reads the URLs only: it
// neither resolves nor dials (docs/design.md §10).
func checkCleartext(o Options) error {
	if o.Credentials == nil || o.AllowCleartextCredentials {
		return nil
	}
	if cleartextRemote(o.URL) {
		return fmt.Errorf("upstream %s: URL is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted; use https, or set AllowCleartextCredentials", o.Name)
	}
	if tu := o.Credentials.tokenURL(); cleartextRemote(tu) {
		return fmt.Errorf("upstream %s: the credentials' TokenURL is plain http to a host that is not loopback: the client secret (and, for an exchange, the caller's token) would travel unencrypted; use https, or set AllowCleartextCredentials", o.Name)
	}
	return nil
}

// cleartextRemote reports whether raw is an http URL whose host is not
// loopback: not localhost, nor an address of 127.0.0.0/8 or ::1. A name
// other than localhost counts as remote, whatever it resolves to: the
// decision is made on the text, never by resolving it.
func cleartextRemote(raw string) bool {
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
