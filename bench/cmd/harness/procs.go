package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wymcp/wymcp/bench/benchauth"
	"github.com/wymcp/wymcp/bench/loadgen"
)

// spec is one server under test.
type spec struct {
	Name     string
	Desc     string
	Shape    loadgen.Shape
	Revision string // the protocol revision its answers show it spoke
	Go       bool   // a Go binary (GOMAXPROCS=1), else node
	pkg      string // Go package under bench/, or the .mjs file
	// Auth marks a server behind bearer auth: the harness signs a token
	// for it (benchauth), passes it the JWK Set in env, and sends header
	// with every request.
	Auth   bool
	env    []string
	header []string
}

// request is the echo request the loader sends s at addr.
func (s spec) request(addr string) []byte {
	return loadgen.EchoRequest(s.Shape, addr, "/mcp", s.header...)
}

var allSpecs = []spec{
	{Name: "wymcp", Desc: "wymcp (this repo, raw tool)", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/wymcp"},
	{Name: "wymcp-auth", Desc: "wymcp + JWT bearer auth (RS256, JWKS file)", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/wymcp-auth", Auth: true},
	{Name: "gosdk", Desc: "go-sdk v1.8.0 Stateless+JSONResponse", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/gosdk"},
	{Name: "mcpgo", Desc: "mcp-go v1.2.1 WithStateLess", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/mcpgo"},
	{Name: "ts", Desc: "TS SDK v2 server 2.4.0 + node 2.1.2", Shape: loadgen.ShapeM, Go: false, pkg: "servers/ts/server.mjs"},
	{Name: "bare", Desc: "net/http + encoding/json, canned result", Shape: loadgen.ShapeM, Go: true, pkg: "./servers/bare"},
}

// running tracks every started server so that a signal or a fatal error
// kills them all.
var (
	runMu   sync.Mutex
	running = map[int]*exec.Cmd{}
)

func killAll() {
	runMu.Lock()
	defer runMu.Unlock()
	for pid, c := range running {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // its process group
		_ = c.Process.Kill()
		delete(running, pid)
	}
}

// proc is one started server.
type proc struct {
	cmd  *exec.Cmd
	pid  int
	addr string
	done chan struct{}
	err  error
	log  *bytes.Buffer
}

// build compiles the Go servers into dir and checks node's packages.
func build(root, dir string, specs []spec) (map[string]string, error) {
	bins := map[string]string{}
	for _, s := range specs {
		if !s.Go {
			mjs := filepath.Join(root, s.pkg)
			if _, err := exec.LookPath("node"); err != nil {
				return nil, fmt.Errorf("%s needs node on PATH: %w", s.Name, err)
			}
			tsdir := filepath.Dir(mjs)
			if _, err := os.Stat(filepath.Join(tsdir, "node_modules")); err != nil {
				cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
				cmd.Dir = tsdir
				if out, err := cmd.CombinedOutput(); err != nil {
					return nil, fmt.Errorf("npm ci in %s: %v\n%s", tsdir, err, out)
				}
			}
			bins[s.Name] = mjs
			continue
		}
		out := filepath.Join(dir, s.Name)
		cmd := exec.Command("go", "build", "-o", out, s.pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", s.pkg, err, b)
		}
		bins[s.Name] = out
	}
	return bins, nil
}

// start runs the server pinned to serverCPU (when taskset is usable) and
// waits until it answers an echo.
func start(s spec, bin string, port int, serverCPU string, extraEnv ...string) (*proc, error) {
	var argv []string
	if serverCPU != "" {
		argv = append(argv, "taskset", "-c", serverCPU)
	}
	if s.Go {
		argv = append(argv, bin)
	} else {
		argv = append(argv, "node", bin)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if s.Go {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Env = append(cmd.Env, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), done: make(chan struct{}), log: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid // taskset execs the server: same pid
	runMu.Lock()
	running[p.pid] = cmd
	runMu.Unlock()
	go func() { p.err = cmd.Wait(); close(p.done) }()
	req := s.request(p.addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited at start: %v\n%s", s.Name, p.err, p.log)
		default:
		}
		if body, err := probe(p.addr, req); err == nil {
			if !bytes.Contains(body, loadgen.EchoExpect) {
				p.stop()
				return nil, fmt.Errorf("%s answered the probe with %q", s.Name, body)
			}
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready after 20s\n%s", s.Name, p.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns want if it can be bound on 127.0.0.1, else a free port
// the kernel picks.
func freePort(want int) int {
	if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", want)); err == nil {
		l.Close()
		return want
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return want
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// probe sends one request on a fresh connection and returns the raw answer.
func probe(addr string, req []byte) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if bytes.Contains(out, loadgen.EchoExpect) || bytes.Contains(out, []byte(`"error"`)) {
			return out, nil
		}
		if err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
	}
}

func (p *proc) stop() {
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		<-p.done
	}
	runMu.Lock()
	delete(running, p.pid)
	runMu.Unlock()
}

// cpu returns the process's utime+stime in clock ticks (all threads).
func (p *proc) cpu() (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0, err
	}
	// Fields after the ")" of comm: state is field 3; utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("bad /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s, nil
}

// hwm returns the peak resident set (VmHWM) in KiB.
func (p *proc) hwm() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return 0
}

// boxTicks returns the machine's CPU ticks (all CPUs) from /proc/stat:
// busy ones (user, nice, system, irq, softirq), to see other processes'
// load during a point, and all of them (idle, iowait and steal too).
// Guest time is already in user, so it is not added again.
func boxTicks() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		if i >= 8 {
			break
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i != 3 && i != 4 && i != 7 { // idle, iowait, steal
			busy += n
		}
	}
	return busy, total
}

// setupAuth gives the servers behind auth what they need: one signing key
// for the run, its JWK Set in a file their env names, and a token (valid
// for a day, longer than any run) in the header the loader sends. The
// token is the same for every request, as a real client's is until it
// expires, so the server verifies its signature once and answers the rest
// from its verified-token cache: what a deployment pays per request.
func setupAuth(specs []spec, dir string) error {
	if !slices.ContainsFunc(specs, func(s spec) bool { return s.Auth }) {
		return nil
	}
	key, err := benchauth.NewKey()
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(file, key.JWKS(), 0o600); err != nil {
		return err
	}
	token, err := key.Token(24 * time.Hour)
	if err != nil {
		return err
	}
	for i := range specs {
		if specs[i].Auth {
			specs[i].env = []string{benchauth.JWKSEnv + "=" + file}
			specs[i].header = []string{"Authorization: Bearer " + token}
		}
	}
	return nil
}
