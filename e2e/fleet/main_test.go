package fleet

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// envRun turns the package's tests on.
const envRun = "WYMCP_E2E_FLEET"

// skipLine is what the package says when it runs nothing.
const skipLine = "e2e/fleet: skipped: set " + envRun + "=1 to run the gateway fleet test (nginx from .ci/install-nginx.sh, server-everything from interop/gateway's npm ci)"

// TestMain runs nothing without envRun, and says so on one line: go test
// shows it with -v or in the package's directory, and its summary line reads
// "ok … [no tests to run]", not a bare "ok" that passes for a run.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv(envRun) != "1" {
		fmt.Println(skipLine)
		_ = flag.Set("test.run", "^$")
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// settings are read from the environment; the defaults keep the package
// well under four minutes on a 2-core machine.
type settings struct {
	clients int           // WYMCP_E2E_FLEET_CLIENTS: closed-loop clients, a quarter of them 2025-11-25 ones
	steady  time.Duration // WYMCP_E2E_FLEET_STEADY: the load before the first fault, and after the last
	// newKeys: the upstreams file has retries and idleTimeout, and the
	// gateways -trusted-proxies (WYMCP_E2E_FLEET_NEWKEYS, default 1; 0
	// measures a binary that has neither).
	newKeys bool
	// recovery bounds how long after server-everything answers again a call
	// to it may still fail (WYMCP_E2E_FLEET_RECOVERY; the 1 s, with
	// a margin for a busy CI machine).
	recovery time.Duration
	// stall: how long the upstream replica is stopped (SIGSTOP) before
	// its SIGKILL, so that calls are in flight there (WYMCP_E2E_FLEET_STALL;
	// 0: a bare SIGKILL).
	stall time.Duration
	bin   string // WYMCP_E2E_BIN: a wymcp binary to run instead of building cmd/wymcp
	nginx string // WYMCP_E2E_NGINX_BIN: the nginx binary (default: PATH, then /usr/sbin)
	out   string // WYMCP_E2E_OUT: a directory to copy the nginx logs into
}

func loadSettings(t *testing.T) settings {
	t.Helper()
	s := settings{
		clients:  envInt(t, "WYMCP_E2E_FLEET_CLIENTS", 48),
		steady:   envDuration(t, "WYMCP_E2E_FLEET_STEADY", 8*time.Second),
		newKeys:  envInt(t, "WYMCP_E2E_FLEET_NEWKEYS", 1) != 0,
		recovery: envDuration(t, "WYMCP_E2E_FLEET_RECOVERY", 3*time.Second),
		stall:    envDuration(t, "WYMCP_E2E_FLEET_STALL", 200*time.Millisecond),
		bin:      os.Getenv("WYMCP_E2E_BIN"),
		nginx:    os.Getenv("WYMCP_E2E_NGINX_BIN"),
		out:      os.Getenv("WYMCP_E2E_OUT"),
	}
	if s.clients < 4 || s.steady <= 0 || s.recovery <= 0 || s.stall < 0 {
		t.Fatal("WYMCP_E2E_FLEET_CLIENTS must be at least 4, WYMCP_E2E_FLEET_STEADY and WYMCP_E2E_FLEET_RECOVERY positive")
	}
	return s
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

// repoRoot is ../.. of this package, checked by its go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(b, []byte("module github.com/wymcp/wymcp\n")) {
		t.Fatalf("%s is not the wymcp repository root (go.mod: %v)", root, err)
	}
	return root
}

// The binary is built once, from this work tree, for every process of the
// fleet: gateways and upstream replicas alike.
var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

func wymcpBinary(t *testing.T, s settings) string {
	t.Helper()
	if s.bin != "" {
		return s.bin
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "wymcp-e2e-fleet-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "wymcp")
		cmd := exec.Command("go", "build", "-o", builtBin, "./cmd/wymcp")
		cmd.Dir = repoRoot(t)
		begin := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/wymcp: %v\n%s", err, out)
			return
		}
		t.Logf("built cmd/wymcp in %v", time.Since(begin).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}
