package cleartext

import "testing"

// TestRemote: on the text alone, an http URL to anything but localhost,
// 127.0.0.0/8 or ::1 (an IPv4-mapped loopback address included) is
// remote; https never is.
func TestRemote(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://10.1.2.3/":             true,
		"http://example.com/mcp":       true,
		"http://192.168.0.1:8080/mcp":  true,
		"http://[2001:db8::1]:80/mcp":  true,
		"http://localhost.example/":    true, // a name, not localhost
		"http://127.0.0.2.nip.io/":     true,
		"HTTP://10.1.2.3/":             true,
		"http://127.0.0.1:8080/mcp":    false,
		"http://127.9.9.9/":            false,
		"http://[::1]:9000/mcp":        false,
		"http://localhost:3000/token":  false,
		"http://LOCALHOST/":            false,
		"https://10.1.2.3/":            false,
		"https://example.com/token":    false,
		"http://[::ffff:127.0.0.1]/":   false, // an IPv4-mapped loopback address
		"http://[::ffff:10.1.2.3]:80/": true,
	} {
		if got := Remote(raw); got != want {
			t.Errorf("Remote(%q) = %v, want %v", raw, got, want)
		}
	}
}
