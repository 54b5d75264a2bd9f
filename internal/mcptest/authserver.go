package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// AuthServer is the JSON line interop/oauth/start.sh prints once its real
// authorization server (npm oidc-provider) is ready; interop/oauth/README.md
// says what each member is.
type AuthServer struct {
	Issuer                    string   `json:"issuer"`
	MetadataURL               string   `json:"metadata_url"`
	JWKSURI                   string   `json:"jwks_uri"`
	TokenEndpoint             string   `json:"token_endpoint"`
	IntrospectionEndpoint     string   `json:"introspection_endpoint"`
	RevocationEndpoint        string   `json:"revocation_endpoint"`
	ClientID                  string   `json:"client_id"`
	ClientSecret              string   `json:"client_secret"`
	OpaqueClientID            string   `json:"opaque_client_id"`
	OpaqueClientSecret        string   `json:"opaque_client_secret"`
	IntrospectionClientID     string   `json:"introspection_client_id"`
	IntrospectionClientSecret string   `json:"introspection_client_secret"`
	ExchangeClientID          string   `json:"exchange_client_id"`
	ExchangeClientSecret      string   `json:"exchange_client_secret"`
	Users                     []User   `json:"users"`
	Scopes                    []string `json:"scopes"`
	Audiences                 []string `json:"audiences"`
	JWTAlg                    string   `json:"jwt_alg"`
	JWTKid                    string   `json:"jwt_kid"`
	TokenTTL                  int64    `json:"token_ttl"`
	Server                    string   `json:"server"`
	Node                      string   `json:"node"`
	PID                       int      `json:"pid"`
}

// User is one of the authorization server's users: a client-credentials
// client whose JWT access tokens carry a groups claim.
type User struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Groups       []string `json:"groups"`
}

// StartAuthServer runs the start.sh at script (interop/oauth/start.sh) with
// env added to the environment, and returns its JSON line and a function
// that stops the server, also registered as a cleanup. The server's stderr
// is logged if the test fails. Anything missing (node, npm, the registry
// for a first npm ci) fails the test: callers run it only when asked. A
// cold start includes npm ci, hence the five minutes it is given.
//
// start.sh must exec the server, so that the signal that stops it reaches
// the server itself: a line whose pid is not the script's fails the test.
func StartAuthServer(t testing.TB, script string, env ...string) (AuthServer, func()) {
	t.Helper()
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), env...)
	stderr := &SyncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", script, err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("authorization server stderr:\n%s", stderr.String())
		}
	})

	type lineOrErr struct {
		line []byte
		err  error
	}
	got := make(chan lineOrErr, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadBytes('\n')
		got <- lineOrErr{line, err}
		_, _ = io.Copy(io.Discard, r)
	}()
	var info AuthServer
	select {
	case l := <-got:
		if l.err != nil {
			t.Fatalf("start.sh ended before printing its JSON line: %v\n%s", l.err, stderr.String())
		}
		if err := json.Unmarshal(l.line, &info); err != nil || info.Issuer == "" {
			t.Fatalf("start.sh printed %q (%v)\n%s", l.line, err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("start.sh printed nothing in 5 minutes\n%s", stderr.String())
	}
	if info.PID != cmd.Process.Pid {
		t.Errorf("pid %d in the JSON line, but start.sh runs as %d (it should exec the server)", info.PID, cmd.Process.Pid)
	}
	return info, stop
}

// SyncBuffer is a buffer safe for concurrent writers (a logger, a child
// process's stderr) and a reader: what a test collects to report on failure.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
