//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specialFiles makes the files no operator file may be: a FIFO nobody
// writes (opening it for reading used to block), /dev/zero (endless), and
// a sparse file of 1 GiB (read whole, it added 1 GiB of RSS), each with
// what its refusal says.
func specialFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // no block written
		t.Fatal(err)
	}
	f.Close()
	return map[string]string{
		fifo:        fifo + " is not a regular file (a named pipe)",
		"/dev/zero": "/dev/zero is not a regular file (a character device)",
		huge:        huge + " is larger than",
	}
}

// returns runs f, failing the test if it has not returned within a
// minute: a read that blocks never returns at all.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: still reading after a minute", what)
	}
}

// TestOperatorFilesBounded (issue 38): every file a flag or the -upstreams
// file names is read without blocking on a special file and at most up to
// its cap, at start (a bad command line: exit 2, one line naming the flag
// or key, and the file) and on SIGHUP (loadUpstreams, which a reload
// calls).
func TestOperatorFilesBounded(t *testing.T) {
	t.Parallel()
	special := specialFiles(t)
	dir := t.TempDir()
	iss := "https://as.example.test"
	for path, why := range special {
		upstreamsFile := func(creds string) string {
			f, err := os.CreateTemp(dir, "u-*.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p := f.Name()
			_, _ = f.WriteString("upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    credentials: {" + creds + "}\n")
			f.Close()
			return p
		}
		headers := upstreamsFile("headersFile: " + path)
		secret := upstreamsFile("clientCredentials: {tokenURL: 'http://127.0.0.1:1/token', clientID: gw, clientSecretFile: " + path + "}")
		for _, tc := range []struct {
			args []string
			want string // the start of stderr's one line
		}{
			{[]string{"-state-key-file", path}, "wymcp: -state-key-file: " + why},
			{[]string{"-auth-issuer", iss, "-auth-jwks", path}, "wymcp: -auth-jwks: " + why},
			{[]string{"-auth-issuer", iss, "-auth-introspect", iss + "/i", "-auth-client-id", "rs", "-auth-client-secret-file", path}, "wymcp: -auth-client-secret-file: " + why},
			{[]string{"-upstreams", path}, "wymcp: -upstreams " + path + ": " + why},
			{[]string{"-upstreams", headers}, "wymcp: -upstreams " + headers + ":4: upstreams[0].credentials.headersFile: " + why},
			{[]string{"-upstreams", secret}, "wymcp: -upstreams " + secret + ":4: upstreams[0].credentials.clientCredentials.clientSecretFile: " + why},
		} {
			returns(t, strings.Join(tc.args, " "), func() {
				var stdout, stderr strings.Builder
				err := run(t.Context(), append([]string{"-addr", "127.0.0.1:0"}, tc.args...), &stdout, &stderr)
				if code := exitCode(err, &stderr); code != 2 {
					t.Errorf("%q: exit %d, want 2", tc.args, code)
				}
				if got := stderr.String(); !strings.HasPrefix(got, tc.want) || strings.Count(got, "\n") != 1 {
					t.Errorf("%q: stderr %q, want one line starting %q", tc.args, got, tc.want)
				}
			})
		}
		// The reload's read.
		returns(t, "reload of "+headers, func() {
			if _, err := loadUpstreams(headers, false); err == nil || !strings.Contains(err.Error(), "upstreams[0].credentials.headersFile: "+why) {
				t.Errorf("reload: %v", err)
			}
		})
	}
}
