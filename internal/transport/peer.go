package transport

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientAddress is the address of the client that made r: its peer's, or,
// when the peer is a trusted proxy, the one the proxies say they forwarded
// for: X-Forwarded-For read from its right end, past every address of a
// trusted proxy (the left end is the client's to write, and a client can
// claim any address there). "" when the peer address does not read.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	addr := ap.Addr().Unmap()
	if !trustedProxy(addr, trusted) {
		return addr.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		list := hops[i]
		for list != "" {
			j := strings.LastIndexByte(list, ',')
			hop := strings.TrimSpace(list[j+1:])
			list = list[:max(j, 0)]
			a, err := netip.ParseAddr(hop)
			if err != nil {
				// A hop that does not read ends what can be believed:
				// the last trusted proxy's peer is the client.
				return addr.String()
			}
			a = a.Unmap()
			if !trustedProxy(a, trusted) {
				return a.String()
			}
			addr = a
		}
	}
	return addr.String()
}

func trustedProxy(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
