package transport

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestClientAddress(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"direct", "192.0.2.7:4000", nil, "192.0.2.7"},
		{"direct, its own XFF ignored", "192.0.2.7:4000", []string{"198.51.100.1"}, "192.0.2.7"},
		{"a trusted proxy without XFF", "127.0.0.1:4000", nil, "127.0.0.1"},
		{"one trusted proxy", "127.0.0.1:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged left end", "127.0.0.1:4000", []string{"203.0.113.9, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "127.0.0.1:4000", []string{"198.51.100.1, 10.1.2.3"}, "198.51.100.1"},
		{"two header lines", "127.0.0.1:4000", []string{"198.51.100.1", "10.1.2.3"}, "198.51.100.1"},
		{"a hop that does not read", "127.0.0.1:4000", []string{"198.51.100.1, junk, 10.1.2.3"}, "10.1.2.3"},
		{"every hop trusted", "127.0.0.1:4000", []string{"10.9.9.9"}, "10.9.9.9"},
		{"v4-mapped peer", "[::ffff:127.0.0.1]:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"v6 client", "127.0.0.1:4000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"no trusted proxies", "10.0.0.1:4000", nil, "10.0.0.1"},
		{"remote does not read", "pipe", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddress(r, trusted); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	r := &http.Request{RemoteAddr: "127.0.0.1:1", Header: http.Header{"X-Forwarded-For": {"198.51.100.1"}}}
	if got := clientAddress(r, nil); got != "127.0.0.1" {
		t.Errorf("without trusted proxies: %q", got)
	}
}
