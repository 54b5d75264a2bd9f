package fleet

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func findNginx(t *testing.T, s settings) string {
	t.Helper()
	if s.nginx != "" {
		return s.nginx
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	t.Fatal(envRun + "=1 but nginx is not installed: run .ci/install-nginx.sh")
	return ""
}

// The marked lines of deploy/nginx/wymcp.conf, the only ones rewritten:
// its server lines (one per replica, with the template's parameters) and
// its listen line.
var (
	replicasBlock = regexp.MustCompile(`(?s)([ \t]*)# e2e:replicas begin\n(.*?)[ \t]*# e2e:replicas end\n`)
	serverLine    = regexp.MustCompile(`(?m)^\s*server\s+(\S+)(.*);`)
	listenLine    = regexp.MustCompile(`(?m)^([ \t]*)listen\s+\S+;(\s*# e2e:listen)$`)
	failTimeout   = regexp.MustCompile(`fail_timeout=(\d+)s`)
	// logFormatEnd is the end of the template's log_format, where the
	// upstream nginx's lines gain the request's body (withBodies).
	logFormatEnd = regexp.MustCompile(`(?s)(\n[ \t]*log_format wymcp .*?)';\n`)
)

func templateText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "nginx", "wymcp.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// renderConfig is deploy/nginx/wymcp.conf with its replicas and listen
// address; both tiers of the fleet run it.
func renderConfig(t *testing.T, addrs []string, listen string) string {
	t.Helper()
	conf := templateText(t)
	m := replicasBlock.FindStringSubmatch(conf)
	if m == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no '# e2e:replicas begin' ... '# e2e:replicas end' block")
	}
	sm := serverLine.FindStringSubmatch(m[2])
	if sm == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no server line between the replicas markers")
	}
	var b strings.Builder
	b.WriteString(m[1] + "# e2e:replicas begin\n")
	for _, a := range addrs {
		b.WriteString(m[1] + "server " + a + sm[2] + ";\n")
	}
	b.WriteString(m[1] + "# e2e:replicas end\n")
	conf = strings.Replace(conf, m[0], b.String(), 1)
	if !listenLine.MatchString(conf) {
		t.Fatal("deploy/nginx/wymcp.conf: no 'listen ...; # e2e:listen' line")
	}
	return listenLine.ReplaceAllString(conf, "${1}listen "+listen+";${2}")
}

// withBodies is conf with each access log line ending in the request's
// body: the upstream nginx's log then names the call that each of a
// gateway's tries carried (the echo's text, which holds the load's call
// number), so that a call's tries can be told apart (attempts). Only the
// test's copy logs bodies: a deployment must not log what callers send.
func withBodies(t *testing.T, conf string) string {
	t.Helper()
	if !logFormatEnd.MatchString(conf) {
		t.Fatal("deploy/nginx/wymcp.conf: no 'log_format wymcp ...;'")
	}
	return logFormatEnd.ReplaceAllString(conf, "${1} worker=$$pid at=$$msec body=\"$$request_body\"';\n")
}

// failTimeoutOf is the template's fail_timeout (nginx's default, 10 s, when
// it sets none): how long, in nginx's whole seconds, it may skip a replica
// that refused a connection; a rolling restart waits it out (takenBack).
func failTimeoutOf(t *testing.T) time.Duration {
	t.Helper()
	m := replicasBlock.FindStringSubmatch(templateText(t))
	if m == nil {
		t.Fatal("deploy/nginx/wymcp.conf: no replicas block")
	}
	if f := failTimeout.FindStringSubmatch(m[2]); f != nil {
		n, _ := strconv.Atoi(f[1])
		return time.Duration(n) * time.Second
	}
	return 10 * time.Second
}

// balancer is an nginx started from a temporary prefix.
type balancer struct {
	name   string
	prefix string
	base   string // http://127.0.0.1:port
	p      *proc
}

// startNginx starts deploy/nginx/wymcp.conf in front of addrs; with
// bodies, its access log has each request's body (withBodies).
func startNginx(t *testing.T, s settings, name string, addrs []string, bodies bool) *balancer {
	t.Helper()
	bin := findNginx(t, s)
	prefix, err := os.MkdirTemp("", "wymcp-e2e-fleet-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prefix) })
	// Workers run as another user when the master is root: they must reach
	// the prefix to create their temporary files.
	if err := os.Chmod(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(freePort(t))
	conf := filepath.Join(prefix, "nginx.conf")
	text := renderConfig(t, addrs, listen)
	if bodies {
		text = withBodies(t, text)
	}
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-p", prefix, "-e", filepath.Join(prefix, "error.log"), "-c", conf}
	if out, err := exec.Command(bin, append([]string{"-t", "-q"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t rejects the rendered deploy/nginx/wymcp.conf: %v\n%s", err, out)
	}
	b := &balancer{name: name, prefix: prefix, base: "http://" + listen}
	b.p = startProc(t, name, exec.Command(bin, args...), "")
	t.Cleanup(func() { b.stop(t, s) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b.p.exited() {
			t.Fatalf("%s exited: %v\n%s\n%s", name, b.p.err, b.p.logs.String(), b.errorLog())
		}
		resp, err := probeClient.Get(b.base + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer /healthz within 10 s: %v\n%s", name, err, b.errorLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *balancer) errorLog() string {
	out, _ := os.ReadFile(filepath.Join(b.prefix, "error.log"))
	return string(out)
}

// stop ends nginx gracefully (SIGQUIT: its logs flushed), keeping its logs
// in WYMCP_E2E_OUT when set.
func (b *balancer) stop(t *testing.T, s settings) {
	if !b.p.exited() {
		_ = b.p.stop(syscall.SIGQUIT, 5*time.Second)
	}
	if s.out == "" {
		return
	}
	dir := filepath.Join(s.out, t.Name(), b.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("WYMCP_E2E_OUT: %v", err)
		return
	}
	for _, f := range []string{"nginx.conf", "error.log", "access.log"} {
		if data, err := os.ReadFile(filepath.Join(b.prefix, f)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
	}
}

// status5xx counts the access log's answers of status 500 or more by status
// and the address of the replica that nginx sent the call to (or the
// group's name when none could be tried): what this tier lost.
func (b *balancer) status5xx() map[string]int {
	data, _ := os.ReadFile(filepath.Join(b.prefix, "access.log"))
	out := map[string]int{}
	status := regexp.MustCompile(`HTTP/1\.1" (5\d\d) `)
	for line := range strings.Lines(string(data)) {
		m := status.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		up := "-"
		if i := strings.Index(line, " upstream="); i >= 0 {
			up, _, _ = strings.Cut(line[i+len(" upstream="):], " ")
		}
		out[m[1]+" from "+up]++
	}
	return out
}

// attempt is one line of an access log written with bodies: one try of a
// call, as nginx answered it.
type attempt struct {
	status string // nginx's answer's status
	// last is the replica nginx tried last ($upstream_addr's last
	// address): the one that answered, or lost the call.
	last string
	// worker and at are the nginx worker that handled the try and when
	// it ended (seconds since the epoch), for the report.
	worker, at string
}

// lostAt reports whether the try was lost at replica addr: nginx's own
// 502, the call sent there and no answer had (it never resends a POST).
func (a attempt) lostAt(addr string) bool { return a.status == "502" && a.last == addr }

func (a attempt) String() string {
	return a.status + " from " + a.last + " (worker " + a.worker + ", at " + a.at + ")"
}

// accessLine is a line of an access log written with bodies (withBodies)
// for a call of the load.
var accessLine = regexp.MustCompile(`HTTP/1\.1" (\d{3}) .* upstream=(.*?) ustatus=.* worker=(\d+) at=(\S+) body=".*fleet (\d+) `)

// attempts reads an access log written with bodies: the tries of each
// call of the load (load.call), by the call's number. A gateway's retry
// carries the same arguments as its first try, so one call's tries share
// its number.
func (b *balancer) attempts() map[int64][]attempt {
	data, _ := os.ReadFile(filepath.Join(b.prefix, "access.log"))
	out := map[int64][]attempt{}
	for line := range strings.Lines(string(data)) {
		m := accessLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[5], 10, 64)
		if err != nil {
			continue
		}
		ups := strings.Split(m[2], ", ")
		out[n] = append(out[n], attempt{status: m[1], last: strings.TrimSpace(ups[len(ups)-1]), worker: m[3], at: m[4]})
	}
	// Each worker writes its lines in its own buffer: in the order they
	// ended ($msec, seconds with milliseconds, all of one length).
	for _, at := range out {
		slices.SortStableFunc(at, func(a, b attempt) int { return strings.Compare(a.at, b.at) })
	}
	return out
}
