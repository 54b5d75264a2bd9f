package upstream

import (
	"fmt"

	"github.com/wymcp/wymcp/internal/cleartext"
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
	if cleartext.Remote(o.URL) {
		return fmt.Errorf("upstream %s: URL is plain http to a host that is not loopback, and the upstream has credentials, which would travel unencrypted; use https, or set AllowCleartextCredentials", o.Name)
	}
	if tu := o.Credentials.tokenURL(); cleartext.Remote(tu) {
		return fmt.Errorf("upstream %s: the credentials' TokenURL is plain http to a host that is not loopback: the client secret (and, for an exchange, the caller's token) would travel unencrypted; use https, or set AllowCleartextCredentials", o.Name)
	}
	return nil
}
