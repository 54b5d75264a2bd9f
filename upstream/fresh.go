package upstream

import (
	"strings"
	"time"
)

// How fresh the served tools are (docs/design.md §10e): the gateway
// answers tools/list with a ttlMs no longer than the interval at which an
// upstream's tools are read again, and reads an upstream again before it
// answers a call of a name it does not know, when the upstream could
// serve that name.

// minWatch is the shortest refresh interval Watch takes from an upstream's
// ttlMs.
const minWatch = time.Second

// noTTLWatch is Watch's interval when the upstream gives no ttlMs.
const noTTLWatch = time.Minute

// RefreshInterval is how long Watch waits between two reads of the
// upstream's tools/list: Options.Refresh when set; otherwise the ttlMs of
// the upstream's last tools/list, but at least a second (an upstream's
// cache hint is not a polling rate the gateway must follow), or a minute
// when it gave none. The served tools never change more often than
// this, but for a change the upstream's own stream tells (Watch) or a
// Refresh: a gateway's tools/list says so in its ttlMs.
func (u *Upstream) RefreshInterval() time.Duration {
	if u.opts.Refresh > 0 {
		return u.opts.Refresh
	}
	// Never u.mu: it is held for a whole tools/list, which a slow
	// upstream may make last its ConnectTimeout per page.
	wait := time.Duration(u.ttl.Load())
	if wait <= 0 {
		return noTTLWatch
	}
	return max(wait, minWatch)
}

// MayServe reports whether a tool served under name could be one of this
// upstream's, now or after its tools/list changes: an override names it,
// or it starts with the upstream's prefix as served names carry it (the
// part of it a name long enough to be hashed keeps). A gateway asked for
// a tool it does not know reads only those upstreams again.
func (u *Upstream) MayServe(name string) bool {
	for _, ov := range u.opts.Overrides {
		if ov.Name == name {
			return true
		}
	}
	p := sanitize(u.opts.Prefix)
	// servedNames keeps at least maxName-17 bytes of a hashed name.
	if len(p) > maxName-17 {
		p = p[:maxName-17]
	}
	return strings.HasPrefix(name, p)
}
