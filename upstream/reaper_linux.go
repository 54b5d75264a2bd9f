package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The reaper (docs/design.md §10d). A stdio upstream's program is not the
// gateway's child but the reaper's: the gateway's own executable run
// again, which this package's init turns into the reaper before the
// embedder's main runs, whatever program embeds the library (a process
// started with reaperEnv set to reaperOn). It is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every descendant of the program that loses
// its parent (npx's node) becomes its child rather than init's; it runs
// the program in a process group of its own, and ends that group, and
// every descendant left, when:
//   - the program exits (what it left behind would be orphans);
//   - it gets reaperDie: from the gateway (kill), or from the kernel when
//     the gateway dies, even SIGKILLed (the reaper's Pdeathsig);
//
// and passes SIGTERM to the group (the gateway's graceful stop).
const (
	reaperEnv  = "WYMCP_STDIO_REAPER"
	reaperOn   = "1"
	reaperArg0 = "wymcp-stdio-reaper"
	reaperDie  = syscall.SIGUSR1
	// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
	prSetChildSubreaper = 36
)

func init() {
	if os.Getenv(reaperEnv) == reaperOn && len(os.Args) >= 2 && os.Args[0] == reaperArg0 {
		os.Exit(reap(os.Args[1], os.Args[2:]))
	}
}

// reap runs the program path with args and returns the reaper's exit
// status: the program's, or 128 and a signal's number.
func reap(path string, args []string) int {
	os.Unsetenv(reaperEnv)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, reaperDie)
	if os.Getppid() == 1 {
		return 128 + int(reaperDie) // the gateway is gone already
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "wymcp reaper: PR_SET_CHILD_SUBREAPER: %v\n", errno)
		return 126
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{path}, args...),
		Env:         os.Environ(),
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "wymcp reaper: %v\n", err)
		return 127
	}
	pid := cmd.Process.Pid
	// The program has the pipes; the reaper lets go of stdin and stdout,
	// so that the gateway sees their ends when the program's group is
	// gone. stderr stays, for the reaper's own words.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		_ = syscall.Dup3(int(null.Fd()), 0, 0)
		_ = syscall.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}
	exited := make(chan syscall.WaitStatus, 1)
	gone := make(chan struct{})
	go func() {
		// Every child of the reaper's is reaped here: the program, and
		// the descendants it left, made the reaper's by the subreaper.
		defer close(gone)
		for {
			var st syscall.WaitStatus
			got, err := syscall.Wait4(-1, &st, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return // ECHILD: none left
			}
			if got == pid {
				exited <- st
			}
		}
	}()
	for {
		select {
		case sig := <-sigs:
			if sig == reaperDie {
				endAll(pid, gone)
				return 128 + int(reaperDie)
			}
			_ = syscall.Kill(-pid, syscall.SIGTERM)
		case st := <-exited:
			endAll(pid, gone)
			switch {
			case st.Exited():
				return st.ExitStatus()
			case st.Signaled():
				return 128 + int(st.Signal())
			}
			return 1
		}
	}
}

// endAll kills the program's group and every process left that is the
// reaper's child (descendants whose parents died), until none is left.
func endAll(pgid int, gone chan struct{}) {
	for i := 0; i < 100; i++ {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		for _, p := range childrenOf(os.Getpid()) {
			_ = syscall.Kill(-p, syscall.SIGKILL) // its group, if it leads one
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		select {
		case <-gone:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// childrenOf lists the processes whose parent is ppid, from /proc.
func childrenOf(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parentOf(pid) == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf reads a process's parent from /proc/<pid>/stat, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return -1
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return n
}
