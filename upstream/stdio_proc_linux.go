package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// childSpec is how a stdio upstream's program is run: its resolved path,
// arguments, whole environment and directory.
type childSpec struct {
	path string
	args []string
	env  []string
	dir  string
}

// newChildSpec resolves o's Command (in the child's PATH when it is a bare
// name) and builds the child's environment: Env, the variables InheritEnv
// names, and PATH (the gateway's, unless Env or InheritEnv set it).
func newChildSpec(o Options) (childSpec, error) {
	env := map[string]string{}
	for _, k := range o.InheritEnv {
		if k == "*" {
			for _, kv := range os.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok && k != reaperEnv {
					env[k] = v
				}
			}
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range o.Env {
		env[k] = v
	}
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = os.Getenv("PATH")
	}
	sp := childSpec{args: slices.Clone(o.Args), dir: o.Dir}
	for k, v := range env {
		sp.env = append(sp.env, k+"="+v)
	}
	slices.Sort(sp.env)
	path, err := lookPath(o.Command, env["PATH"], o.Dir)
	if err != nil {
		return childSpec{}, err
	}
	sp.path = path
	return sp, nil
}

// callerTag in an Arg or an Env value is replaced by the caller's tag
// (forCaller).
const callerTag = "${WYMCP_CALLER}"

// forCaller is sp with callerTag replaced by tag in its arguments and
// environment: "shared" for the shared child, a hash of the caller's
// identity for a caller's own (PerCaller), so that each has a file of its
// own where the server keeps its state in one.
func (sp childSpec) forCaller(tag string) childSpec {
	out := sp
	out.args = make([]string, len(sp.args))
	for i, a := range sp.args {
		out.args[i] = strings.ReplaceAll(a, callerTag, tag)
	}
	out.env = make([]string, len(sp.env))
	for i, kv := range sp.env {
		k, v, _ := strings.Cut(kv, "=")
		out.env[i] = k + "=" + strings.ReplaceAll(v, callerTag, tag)
	}
	return out
}

// lookPath finds the program as the child's PATH would, without a shell: a
// name with a slash is a path (relative to dir); any other is looked up in
// path.
func lookPath(name, path, dir string) (string, error) {
	executable := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			base := dir
			if base == "" {
				base, _ = os.Getwd()
			}
			p = filepath.Join(base, p)
		}
		if !executable(p) {
			return "", fmt.Errorf("command %q: not an executable file", name)
		}
		return p, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue // a relative PATH entry would depend on the directory
		}
		if p := filepath.Join(d, name); executable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q: not found in the child's PATH %q", name, path)
}

// process is a running child: the reaper (reaper.go), whose own child is
// the program, in a process group of its own.
type process struct {
	cmd *exec.Cmd
}

// spawn starts the program under a reaper, and returns the child with the
// reading ends of its stdout and stderr.
func (sp childSpec) spawn() (*child, *os.File, *os.File, error) {
	if fi, err := os.Stat(sp.dir); sp.dir != "" && (err != nil || !fi.IsDir()) {
		// Said here: the start would fail on the reaper's path instead.
		return nil, nil, nil, fmt.Errorf("dir %q: not a directory that exists", sp.dir)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	cmd := &exec.Cmd{
		// The gateway's own executable, whatever program embeds the
		// library: its init runs the reaper (reaper.go).
		Path:   "/proc/self/exe",
		Args:   append([]string{reaperArg0, sp.path}, sp.args...),
		Env:    append(slices.Clone(sp.env), reaperEnv+"="+reaperOn),
		Dir:    sp.dir,
		Stdin:  inR,
		Stdout: outW,
		Stderr: errW,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid: true,
			// The gateway dying (even SIGKILLed) tells the reaper, which
			// ends the program's whole group.
			Pdeathsig: reaperDie,
		},
	}
	err = startReaper(cmd)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, nil, nil, err
	}
	return newChild(&process{cmd: cmd}, inW, cmd.Process.Pid), outR, errR, nil
}

// spawns are the reapers to start on the spawning thread (startReaper).
var (
	spawns     = make(chan spawnRequest)
	spawnsOnce sync.Once
)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// startReaper starts cmd, a reaper, from one goroutine locked to its
// thread for the life of the process. Pdeathsig belongs to the thread that
// forks, not to the process: a reaper forked on a thread the runtime ends
// later (a goroutine exiting locked to it, in the embedder's code or a
// library's) would take that for the gateway's death and end its program.
func startReaper(cmd *exec.Cmd) error {
	spawnsOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range spawns {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawns <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// wait waits for the reaper to exit (after the program and its group).
func (p *process) wait() error {
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if st, ok := exit.Sys().(syscall.WaitStatus); ok && st.Exited() && st.ExitStatus() >= 128 && st.ExitStatus() < 128+65 {
			return fmt.Errorf("killed by %v", syscall.Signal(st.ExitStatus()-128))
		}
	}
	return err
}

// terminate asks the program's group to end (SIGTERM, through the reaper).
func (p *process) terminate() { _ = p.cmd.Process.Signal(syscall.SIGTERM) }

// kill ends the program's group at once (SIGKILL, through the reaper,
// which then exits).
func (p *process) kill() { _ = p.cmd.Process.Signal(reaperDie) }

// killReaper is the last resort for a reaper that does not exit.
func (p *process) killReaper() { _ = p.cmd.Process.Kill() }
