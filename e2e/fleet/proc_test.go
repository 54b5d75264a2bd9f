package fleet

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// ring keeps the first lines a process wrote (a failed start says why
// there, before a usage text) and the last ones, for failure reports.
type ring struct {
	mu      sync.Mutex
	head    []string
	lines   []string
	dropped int
}

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.head) < 10 {
		r.head = append(r.head, line)
		return
	}
	r.lines = append(r.lines, line)
	if len(r.lines) > 80 {
		r.dropped += len(r.lines) - 40
		r.lines = append(r.lines[:0], r.lines[len(r.lines)-40:]...)
	}
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.head...)
	if r.dropped > 0 {
		out = append(out, fmt.Sprintf("[%d lines left out]", r.dropped))
	}
	return strings.Join(append(out, r.lines...), "\n")
}

// proc is a child process in its own process group, killed with its group
// when the test ends, passed or failed, and killed by the kernel if the
// test binary dies first (Pdeathsig): nothing it started outlives the test.
type proc struct {
	name  string
	cmd   *exec.Cmd
	done  chan struct{} // closed once it has exited and its output is read
	err   error         // its exit status, once done is closed
	logs  ring          // stdout and stderr, but for the ready line
	ready chan string   // the rest of the first line starting with the ready prefix
}

// startProc starts cmd and reads its stdout and stderr into its ring; the
// first line that starts with readyPrefix is sent on ready.
func startProc(t *testing.T, name string, cmd *exec.Cmd, readyPrefix string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), ready: make(chan string, 1)}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s (pid %d), its last lines:\n%s", name, cmd.Process.Pid, p.logs.String())
		}
	})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, readyPrefix); ok && !found && readyPrefix != "" {
				found = true
				p.ready <- strings.TrimSpace(rest)
				continue
			}
			p.logs.add(line)
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		<-read
		close(p.done)
	}()
	return p
}

// waitReady waits up to timeout for the ready line; an exit first is an
// error with the process's last lines.
func (p *proc) waitReady(timeout time.Duration) (string, error) {
	select {
	case rest := <-p.ready:
		return rest, nil
	case <-p.done:
		select {
		case rest := <-p.ready:
			return rest, nil
		default:
		}
		return "", fmt.Errorf("%s exited (%v) before it listened; its last lines:\n%s", p.name, p.err, p.logs.String())
	case <-time.After(timeout):
		p.kill()
		return "", fmt.Errorf("%s did not listen within %v; its last lines:\n%s", p.name, timeout, p.logs.String())
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill ends the whole process group with SIGKILL and waits for the exit.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// stop sends sig and waits up to timeout for the exit, then kills.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !p.exited() {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.kill()
		return fmt.Errorf("%s did not exit within %v of %v", p.name, timeout, sig)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is one wymcp process (a gateway or an upstream replica) or
// server-everything; a restart keeps its address.
type server struct {
	name    string
	addr    string // 127.0.0.1:port
	version string // a wymcp process's -version, its own: who answered a call through a balancer
	p       *proc
}

// processes numbers the wymcp processes started, for their -version.
var processes atomic.Int64

const listeningPrefix = "wymcp listening on http://"

// startWymcp starts the binary on addr ("127.0.0.1:0" the first time) and
// waits for its listening line (a gateway listens once it has connected its
// upstreams, or given up on one after its connectTimeout). Each process has a -version of its own,
// which every result's serverInfo names: a call's answer through nginx
// says which process answered it, so a restarted replica is told apart
// from the one it replaced on the same address.
func startWymcp(t *testing.T, bin, name, addr string, args []string) (*server, error) {
	t.Helper()
	version := "0.1.0-fleet." + strconv.FormatInt(processes.Add(1), 10)
	cmd := exec.Command(bin, append([]string{"-addr", addr, "-version", version}, args...)...)
	cmd.Env = append(os.Environ(), "OTEL_SDK_DISABLED=true")
	p := startProc(t, name, cmd, listeningPrefix)
	rest, err := p.waitReady(60 * time.Second)
	if err != nil {
		return nil, err
	}
	host, _, _ := strings.Cut(rest, "/")
	return &server{name: name, addr: host, version: version, p: p}, nil
}

// startEverything starts server-everything the way interop/gateway does
// (its start-everything.sh, which installs the pinned npm package when
// missing and execs node) on port (0: a free one), and waits until it
// listens.
func startEverything(t *testing.T, port int) (*server, error) {
	t.Helper()
	script := filepath.Join(repoRoot(t), "interop", "gateway", "start-everything.sh")
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	p := startProc(t, "server-everything", cmd, "interop-gateway: listening on ")
	addr, err := p.waitReady(3 * time.Minute) // a first npm ci included
	if err != nil {
		return nil, err
	}
	return &server{name: "server-everything", addr: addr, p: p}, nil
}

// probeClient is for health checks: no keep-alive, so that a probe never
// holds a connection to a process about to stop.
var probeClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// waitReadyz polls base/readyz until 200, the process's exit or timeout.
func waitReadyz(base string, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited (%v) (last probe: %s); its last lines:\n%s", p.name, p.err, last, p.logs.String())
		}
		resp, err := probeClient.Get(base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = "/readyz " + strconv.Itoa(resp.StatusCode)
		} else {
			last = err.Error()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %v (last probe: %s)", base, timeout, last)
}
