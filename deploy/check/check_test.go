// Package check validates deploy/ without a Docker engine or a cluster:
// the Kubernetes manifest parses and sets what the drain depends on, the
// Dockerfile holds the pieces the other files rely on, and the binaries
// built with the Dockerfile's own commands are static, run as the image's
// non-root user, and answer their probes.
//
//	cd deploy/check && go test ./...
package check

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// deployDir is deploy/, the parent of this package.
func deployDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "Dockerfile")); err != nil {
		t.Fatalf("%s is not deploy/: %v", d, err)
	}
	return d
}

// The drain's numbers (docs/design.md §6a, cmd/wymcp/drain.go): the
// defaults of -drain-delay and -shutdown-timeout, and the longest call:
// the default tool deadline and its grace. A stop takes at most drain
// delay + shutdown timeout, and the shutdown timeout must cover the
// longest call.
const (
	defaultDrainDelay      = 5 * time.Second
	defaultShutdownTimeout = 65 * time.Second
	longestCall            = 60*time.Second + time.Second
	imageUID               = 65532 // distroless "nonroot"
	containerPort          = 8080
)

// ---- Kubernetes

// The parts of the manifest the checks read.
type (
	object struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec yaml.Node `yaml:"spec"`
	}
	deploymentSpec struct {
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	}
	podSpec struct {
		TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot *bool `yaml:"runAsNonRoot"`
			RunAsUser    *int  `yaml:"runAsUser"`
		} `yaml:"securityContext"`
		Containers []container `yaml:"containers"`
	}
	container struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		ReadinessProbe *probe `yaml:"readinessProbe"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
		Lifecycle      *struct {
			PreStop any `yaml:"preStop"`
		} `yaml:"lifecycle"`
		Resources struct {
			Requests map[string]string `yaml:"requests"`
			Limits   map[string]string `yaml:"limits"`
		} `yaml:"resources"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
			RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"` // a number or a port name
		} `yaml:"httpGet"`
		PeriodSeconds    int `yaml:"periodSeconds"`
		FailureThreshold int `yaml:"failureThreshold"`
	}
	serviceSpec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Port       int `yaml:"port"`
			TargetPort any `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	pdbSpec struct {
		MinAvailable   any `yaml:"minAvailable"`
		MaxUnavailable any `yaml:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
	}
)

// readManifest decodes every document of deploy/k8s/wymcp.yaml, strictly:
// an unknown or misspelt field of the parts read above is an error only
// where they are decoded, so the kinds are checked one by one below.
func readManifest(t *testing.T) []object {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(t), "k8s", "wymcp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var objs []object
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("deploy/k8s/wymcp.yaml, document %d: %v", len(objs)+1, err)
		}
		if o.Kind == "" || o.APIVersion == "" || o.Metadata.Name == "" {
			t.Fatalf("deploy/k8s/wymcp.yaml, document %d: no kind, apiVersion or metadata.name", len(objs)+1)
		}
		objs = append(objs, o)
	}
	return objs
}

func decodeSpec(t *testing.T, o object, v any) {
	t.Helper()
	if err := o.Spec.Decode(v); err != nil {
		t.Fatalf("%s %s: spec: %v", o.Kind, o.Metadata.Name, err)
	}
}

// durationFlag reads a duration flag from the arguments, or its default.
func durationFlag(t *testing.T, args []string, name string, def time.Duration) time.Duration {
	t.Helper()
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		a = strings.TrimPrefix(a, "-")
		v, ok := strings.CutPrefix(a, name+"=")
		if !ok && a == name && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("-%s %q: %v", name, v, err)
			}
			return d
		}
	}
	return def
}

// hasBoolFlag reports whether the arguments set a boolean flag to true.
func hasBoolFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || a == name+"=true" {
			return true
		}
	}
	return false
}

func sameLabels(a, b map[string]string) bool {
	if len(a) == 0 || len(a) > len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestKubernetesManifest(t *testing.T) {
	objs := readManifest(t)
	byKind := map[string]object{}
	for _, o := range objs {
		if _, dup := byKind[o.Kind]; dup {
			t.Errorf("two %s documents", o.Kind)
		}
		byKind[o.Kind] = o
	}
	for kind, api := range map[string]string{"Deployment": "apps/v1", "Service": "v1", "PodDisruptionBudget": "policy/v1"} {
		if o, ok := byKind[kind]; !ok {
			t.Errorf("no %s", kind)
		} else if o.APIVersion != api {
			t.Errorf("%s: apiVersion %q, want %q", kind, o.APIVersion, api)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	var dep deploymentSpec
	decodeSpec(t, byKind["Deployment"], &dep)
	if dep.Replicas == nil || *dep.Replicas < 2 {
		t.Errorf("Deployment: replicas %v, want at least 2 (a drain needs somewhere to send calls)", dep.Replicas)
	}
	podLabels := dep.Template.Metadata.Labels
	if !sameLabels(dep.Selector.MatchLabels, podLabels) {
		t.Errorf("Deployment: selector %v does not select the pod labels %v", dep.Selector.MatchLabels, podLabels)
	}
	pod := dep.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment: %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	// Listener and ports.
	if !strings.Contains(strings.Join(c.Args, " "), "-addr=0.0.0.0:8080") {
		t.Errorf("container args %q: want -addr=0.0.0.0:8080 (all interfaces: probes and the Service reach the pod address)", c.Args)
	}
	portNames := map[string]int{}
	for _, p := range c.Ports {
		portNames[p.Name] = p.ContainerPort
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != containerPort {
		t.Errorf("container ports %+v, want one, %d", c.Ports, containerPort)
	}
	resolvePort := func(what string, v any) int {
		switch p := v.(type) {
		case int:
			return p
		case string:
			if n, ok := portNames[p]; ok {
				return n
			}
		}
		t.Errorf("%s: port %v names no container port", what, v)
		return 0
	}

	// Probes: readiness on /readyz, liveness on /healthz, both on the port.
	for _, pc := range []struct {
		what, path string
		p          *probe
	}{{"readinessProbe", "/readyz", c.ReadinessProbe}, {"livenessProbe", "/healthz", c.LivenessProbe}} {
		if pc.p == nil || pc.p.HTTPGet == nil {
			t.Errorf("container: no %s.httpGet", pc.what)
			continue
		}
		if pc.p.HTTPGet.Path != pc.path {
			t.Errorf("%s path %q, want %q", pc.what, pc.p.HTTPGet.Path, pc.path)
		}
		if got := resolvePort(pc.what, pc.p.HTTPGet.Port); got != containerPort {
			t.Errorf("%s port %v = %d, want %d", pc.what, pc.p.HTTPGet.Port, got, containerPort)
		}
	}

	// The grace period covers the whole stop: the drain delay, then up to
	// the shutdown timeout for the calls in flight, which covers the
	// longest call.
	drain := durationFlag(t, c.Args, "drain-delay", defaultDrainDelay)
	shutdown := durationFlag(t, c.Args, "shutdown-timeout", defaultShutdownTimeout)
	if shutdown <= longestCall {
		t.Errorf("-shutdown-timeout %v must exceed the longest call %v", shutdown, longestCall)
	}
	if pod.TerminationGracePeriodSeconds == nil {
		t.Errorf("no terminationGracePeriodSeconds (the default, 30 s, is shorter than a call may run)")
	} else if grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second; grace <= drain+shutdown {
		t.Errorf("terminationGracePeriodSeconds %v must exceed -drain-delay %v + -shutdown-timeout %v", grace, drain, shutdown)
	}
	// A Service routes by readiness and still sends new connections for a
	// moment after SIGTERM: the replica must keep accepting through the
	// delay (by default it refuses them, for nginx open source).
	if !hasBoolFlag(c.Args, "drain-accept") {
		t.Errorf("container args %q: want -drain-accept (a Service's endpoints go away only after SIGTERM)", c.Args)
	}
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
		t.Errorf("a preStop hook: the server's drain delay is the wait; a preStop sleep only lengthens both (see the manifest's comment)")
	}

	// Non-root, read-only, no privileges.
	nonRoot := (pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot) ||
		(c.SecurityContext.RunAsNonRoot != nil && *c.SecurityContext.RunAsNonRoot)
	if !nonRoot {
		t.Error("runAsNonRoot is not true")
	}
	if u := pod.SecurityContext.RunAsUser; u == nil || *u != imageUID {
		t.Errorf("runAsUser %v, want %d (the image's user)", u, imageUID)
	}
	if v := c.SecurityContext.ReadOnlyRootFilesystem; v == nil || !*v {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if v := c.SecurityContext.AllowPrivilegeEscalation; v == nil || *v {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if !strings.EqualFold(strings.Join(c.SecurityContext.Capabilities.Drop, ","), "ALL") {
		t.Errorf("capabilities.drop %v, want [ALL]", c.SecurityContext.Capabilities.Drop)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
	}

	// The Service reaches the pods' port.
	var svc serviceSpec
	decodeSpec(t, byKind["Service"], &svc)
	if !sameLabels(svc.Selector, podLabels) {
		t.Errorf("Service selector %v does not select the pod labels %v", svc.Selector, podLabels)
	}
	if len(svc.Ports) == 0 {
		t.Error("Service has no ports")
	}
	for _, p := range svc.Ports {
		if got := resolvePort("Service targetPort", p.TargetPort); got != containerPort {
			t.Errorf("Service targetPort %v = %d, want %d", p.TargetPort, got, containerPort)
		}
	}

	// The budget covers the same pods and lets at least one go.
	var pdb pdbSpec
	decodeSpec(t, byKind["PodDisruptionBudget"], &pdb)
	if !sameLabels(pdb.Selector.MatchLabels, podLabels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pod labels %v", pdb.Selector.MatchLabels, podLabels)
	}
	if (pdb.MinAvailable == nil) == (pdb.MaxUnavailable == nil) {
		t.Error("PodDisruptionBudget: set exactly one of minAvailable and maxUnavailable")
	}
	t.Logf("Deployment: %d replicas, -drain-delay %v, -shutdown-timeout %v, -drain-accept, grace %ds; Service and PodDisruptionBudget select %v", *dep.Replicas, drain, shutdown, *pod.TerminationGracePeriodSeconds, podLabels)
}

// ---- Dockerfile

// The builder stage's environment and commands, which
// TestBinariesAsTheDockerfileBuilds runs, and the final stage's health
// check and listen address; the Dockerfile must hold them verbatim.
const (
	buildEnv         = "ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOWORK=off"
	buildWymcp       = `RUN cd cmd/wymcp && go build -trimpath -ldflags="-s -w" -o /out/wymcp .`
	buildHealthcheck = `RUN cd deploy/healthcheck && go build -trimpath -ldflags="-s -w" -o /out/healthcheck .`
	healthcheckLine  = `CMD ["/healthcheck", "-timeout", "2s", "-addr-env", "WYMCP_ADDR", "/readyz"]`
	addrEnv          = "WYMCP_ADDR"
	imageAddr        = "ENV WYMCP_ADDR=0.0.0.0:8080"
)

func readDockerfile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// instruction is one Dockerfile instruction, its continuation lines
// joined, and the stage it is in (0 for the first FROM's).
type instruction struct {
	op, args string
	stage    int
}

func instructions(df string) []instruction {
	var out []instruction
	stage, cur := -1, ""
	for line := range strings.Lines(df) {
		line = strings.TrimRight(line, "\r\n")
		if cur == "" && (strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "") {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur += strings.TrimSpace(more) + " "
			continue
		}
		cur += strings.TrimSpace(line)
		op, args, _ := strings.Cut(cur, " ")
		op = strings.ToUpper(op)
		if op == "FROM" {
			stage++
		}
		out = append(out, instruction{op: op, args: strings.TrimSpace(args), stage: stage})
		cur = ""
	}
	return out
}

// execForm decodes an exec-form argument list, ["a", "b"].
func execForm(t *testing.T, args string) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatalf("%s is not an exec-form list: %v", args, err)
	}
	return v
}

func TestDockerfile(t *testing.T) {
	df := readDockerfile(t)
	for _, want := range []string{
		buildEnv, buildWymcp, buildHealthcheck, healthcheckLine, imageAddr,
		"COPY --from=build /out/wymcp /out/healthcheck /",
		fmt.Sprintf("USER %d:%d", imageUID, imageUID),
		fmt.Sprintf("EXPOSE %d", containerPort),
		`ENTRYPOINT ["/wymcp"]`,
		"STOPSIGNAL SIGTERM",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("deploy/Dockerfile lacks %q", want)
		}
	}
	stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?`).FindAllStringSubmatch(df, -1)
	if len(stages) != 2 || stages[0][2] != "build" || !strings.HasPrefix(stages[1][1], "gcr.io/distroless/static") {
		t.Errorf("stages %q: want a builder named build, then a distroless/static final stage", stages)
	}
	// The listen address is WYMCP_ADDR alone: a CMD naming -addr would
	// move the server where the health check does not look.
	for _, in := range instructions(df) {
		if in.stage == 1 && in.op == "CMD" && strings.Contains(in.args, "-addr") {
			t.Errorf("deploy/Dockerfile: CMD %s sets -addr; the health check probes $%s, so set that instead", in.args, addrEnv)
		}
	}
	// The builder's Go is the one go.mod's toolchain line asks for.
	gomod, err := os.ReadFile(filepath.Join(deployDir(t), "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^toolchain go(\S+)$`).FindSubmatch(gomod); m != nil {
		if !strings.Contains(df, "ARG GO_VERSION="+string(m[1])+"\n") {
			t.Errorf("deploy/Dockerfile: ARG GO_VERSION is not go.mod's toolchain %s", m[1])
		}
	}
}

// TestDockerfileModuleLayers checks that the builder downloads the modules
// of each module it builds from in layers of their own, before the sources
// are copied: a change to the sources alone reuses them. The modules are
// the library (its go.mod is also the one cmd/wymcp's replace reads) and
// cmd/wymcp; deploy/healthcheck has no requirements, which this checks too.
func TestDockerfileModuleLayers(t *testing.T) {
	var build []instruction
	for _, in := range instructions(readDockerfile(t)) {
		if in.stage == 0 {
			build = append(build, in)
		}
	}
	sources := slices.IndexFunc(build, func(in instruction) bool { return in.op == "COPY" && in.args == ". ." })
	if sources < 0 {
		t.Fatal("deploy/Dockerfile: the builder has no COPY . .")
	}
	for _, mod := range []struct{ dir, download string }{
		{".", "go mod download"},
		{"cmd/wymcp", "cd cmd/wymcp && go mod download"},
	} {
		files := []string{"go.mod", "go.sum"}
		if mod.dir != "." {
			files = []string{mod.dir + "/go.mod", mod.dir + "/go.sum"}
		}
		copied := slices.IndexFunc(build[:sources], func(in instruction) bool {
			f := strings.Fields(in.args)
			return in.op == "COPY" && len(f) > 1 && slices.Contains(f[:len(f)-1], files[0]) && slices.Contains(f[:len(f)-1], files[1])
		})
		if copied < 0 {
			t.Errorf("deploy/Dockerfile: %s and %s are not copied before the sources (COPY . .)", files[0], files[1])
			continue
		}
		downloaded := slices.IndexFunc(build[copied:sources], func(in instruction) bool {
			return in.op == "RUN" && in.args == mod.download
		})
		if downloaded < 0 {
			t.Errorf("deploy/Dockerfile: no RUN %s between the COPY of %s and the sources", mod.download, files[0])
		}
	}
	hc, err := os.ReadFile(filepath.Join(deployDir(t), "healthcheck", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^require\b`).Match(hc) {
		t.Error("deploy/healthcheck/go.mod has requirements: give its modules a download layer in deploy/Dockerfile, and list it here")
	}
}

// dockerEnv is the variables, k=v each, of an ENV instruction that the
// Dockerfile must hold verbatim (buildEnv, imageAddr).
func dockerEnv(t *testing.T, df, line string) []string {
	t.Helper()
	if !strings.Contains(df, line) {
		t.Fatalf("deploy/Dockerfile lacks %q", line)
	}
	return strings.Fields(strings.TrimPrefix(line, "ENV "))
}

// ---- the binaries

// goBuild runs one of the Dockerfile's build lines in dir, /out being out,
// with the builder's environment (buildEnv) over this process's.
func goBuild(t *testing.T, dir, line, out string, env []string) {
	t.Helper()
	cmdline := strings.TrimPrefix(line, "RUN ")
	cmdline = strings.ReplaceAll(cmdline, "/out/", out+"/")
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
}

// checkStatic fails unless the file is an ELF executable with no dynamic
// loader and no shared libraries: it runs on an image with no libc.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a dynamic loader (PT_INTERP): not static", filepath.Base(path))
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", filepath.Base(path), libs)
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s keeps its symbol table: -ldflags=-s missing", filepath.Base(path))
	}
}

func TestBinariesAsTheDockerfileBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/wymcp")
	}
	root := filepath.Join(deployDir(t), "..")
	// Not t.TempDir: its parent is private to this user, and the image's
	// user must be able to run the binaries.
	out, err := os.MkdirTemp("", "wymcp-deploy-check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	df := readDockerfile(t)
	env := dockerEnv(t, df, buildEnv)
	goBuild(t, root, buildWymcp, out, env)
	goBuild(t, root, buildHealthcheck, out, env)
	wymcp, hc := filepath.Join(out, "wymcp"), filepath.Join(out, "healthcheck")
	checkStatic(t, wymcp)
	checkStatic(t, hc)

	// Run as the image runs: its user (when this test may switch users),
	// no arguments (the image has no CMD), the listen address in
	// WYMCP_ADDR, as the image sets it, but on loopback and a free port.
	imageEnv := dockerEnv(t, df, imageAddr)
	if len(imageEnv) != 1 || !strings.HasPrefix(imageEnv[0], addrEnv+"=") {
		t.Fatalf("%s: want one variable, %s", imageAddr, addrEnv)
	}
	addr := addrEnv + "=127.0.0.1:" + freePort(t)
	cmd := exec.Command(wymcp)
	cmd.Env = []string{"OTEL_SDK_DISABLED=true", addr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: imageUID, Gid: imageUID}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v; stderr:\n%s", err, stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "wymcp listening on http://")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	host, _, _ := strings.Cut(rest, "/")
	if host != strings.TrimPrefix(addr, addrEnv+"=") {
		t.Fatalf("listening on %s, not on %s", host, addr)
	}
	base := "http://" + host

	// A real call answers.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"text":"hi"`)) {
		t.Fatalf("echo: %d %s", resp.StatusCode, b)
	}

	// The health endpoints, once the server has them: the image's
	// HEALTHCHECK runs the prober on /readyz.
	usage, _ := exec.Command(wymcp, "-h").CombinedOutput()
	hasDrain := bytes.Contains(usage, []byte("-drain-delay"))
	probe := func(path string) (int, string) {
		return exitOf(t, exec.Command(hc, "-timeout", "2s", base+path))
	}
	// The image's HEALTHCHECK command, as it is, with the image's
	// environment: it finds the server through WYMCP_ADDR.
	healthcheck := func() (int, string) {
		argv := execForm(t, strings.TrimPrefix(healthcheckLine, "CMD "))
		if argv[0] != "/healthcheck" {
			t.Fatalf("HEALTHCHECK runs %s, not /healthcheck", argv[0])
		}
		c := exec.Command(hc, argv[1:]...)
		c.Env = []string{addr}
		return exitOf(t, c)
	}
	code, msg := healthcheck()
	switch {
	case hasDrain && code != 0:
		t.Errorf("the HEALTHCHECK command with %s exited %d: %s", addr, code, msg)
	case !hasDrain && code == 0:
		t.Errorf("healthcheck passed on %s/readyz, but the binary has no drain", base)
	case !hasDrain:
		t.Logf("the binary has no -drain-delay yet: /readyz is not served (%s); the image's HEALTHCHECK needs it", strings.TrimSpace(msg))
	}
	if hasDrain {
		if code, msg := probe("/healthz"); code != 0 {
			t.Errorf("healthcheck %s/healthz exited %d: %s", base, code, msg)
		}
	}

	// SIGTERM: a clean exit.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(defaultDrainDelay + 15*time.Second):
		t.Errorf("no exit within %v of SIGTERM", defaultDrainDelay+15*time.Second)
	}
	t.Logf("built as deploy/Dockerfile builds them: static wymcp and healthcheck; ran as uid %d with %s; echo answered; the HEALTHCHECK command found it; drain in the binary: %v", cmdUID(cmd), addr, hasDrain)
}

// freePort is a TCP port free on the loopback address a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// cmdUID is the user the command ran as.
func cmdUID(cmd *exec.Cmd) int {
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Credential != nil {
		return int(cmd.SysProcAttr.Credential.Uid)
	}
	return os.Geteuid()
}

// exitOf runs the prober c and returns its exit status and its output; a
// prober that could not be run fails the test.
func exitOf(t *testing.T, c *exec.Cmd) (int, string) {
	t.Helper()
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("healthcheck: %v", err)
	return -1, ""
}
