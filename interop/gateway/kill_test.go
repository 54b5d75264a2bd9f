package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wymcp/wymcp/internal/mcptest"
)

// outcome is one call of the load, as the client saw it.
type outcome struct {
	id         int
	target     string // ev, sdk or mgo
	start, end time.Duration
	sent       string // the unique text
	text       string // the result's text
	isError    bool
	problem    string // why the answer is not one answer to this request
}

func (o outcome) took() time.Duration { return o.end - o.start }

// TestGatewayUpstreamKilled: 8 clients call the three upstreams' echo
// through the gateway for about five seconds, each call with a text of
// its own. A second in, one Go upstream is killed (SIGKILL); its calls
// are then answered at once, as unreachable, then as unavailable once its
// circuit opens (its failures spread over a second, from the eight
// workers: docs/design.md §10b), while every call to the other two
// succeeds. A second and a half later it is started again on the same
// port: its circuit's probe finds it, and its calls succeed again. Over
// the whole load every request gets exactly one answer, with its own id
// (none lost), and every echo its own text (none crossed).
//
// sdk: the go-sdk server, stateless, 2026-07-28. mgo: the mcp-go server
// validating its sessions, pinned to 2025-11-25, so that the gateway's
// session is gone when it returns (404) and a new one must be made.
func TestGatewayUpstreamKilled(t *testing.T) {
	for _, victim := range []string{"sdk", "mgo"} {
		t.Run(victim, func(t *testing.T) { killDuringLoad(t, victim) })
	}
}

func killDuringLoad(t *testing.T, victim string) {
	const (
		workers  = 8
		killAt   = 1200 * time.Millisecond
		startAt  = 2700 * time.Millisecond
		loadFor  = 5 * time.Second
		cooldown = time.Second
		fast     = 250 * time.Millisecond // "at once", with room for a loaded CI machine
	)
	ev, sdk, mgo, sdkProc, mgoProc := threeUpstreams(t, victimArgs(victim)...)
	breaker := fmt.Sprintf("    breaker: {minCalls: 3, probeInterval: %v}\n    callTimeout: 10s\n", cooldown)
	yaml := unionYAML(ev, sdk, mgo, breaker)
	if victim == "mgo" {
		yaml += "    versions: [2025-11-25]\n"
	}
	// Each worker is a caller of its own, by the address the trusted proxy
	// (this test, on loopback) says it forwards for: the breaker opens on
	// failures from more than one caller (docs/design.md §10b).
	_, gw := startGateway(t, t.TempDir(), yaml, "-trusted-proxies", "127.0.0.1/32")
	victimProc, victimURL, bin := sdkProc, sdk, "sdkserver"
	if victim == "mgo" {
		victimProc, victimURL, bin = mgoProc, mgo, "mgoserver"
	}
	u, err := url.Parse(victimURL)
	if err != nil {
		t.Fatal(err)
	}

	// mcp-go's session, before: the one the gateway made at start.
	var session string
	if victim == "mgo" {
		session, _ = callText(t, context.Background(), gw, "mgo_session", `{}`, "")
		if session == "" {
			t.Fatal("the gateway has no session with the mcp-go upstream pinned to 2025-11-25")
		}
	}

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers * 2}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), loadFor+30*time.Second)
	defer cancel()
	begin := time.Now()
	var (
		nextID   atomic.Int64
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
	)
	targets := []string{"ev", "sdk", "mgo"}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Since(begin) < loadFor; n++ {
				target := targets[(w+n)%len(targets)]
				id := int(nextID.Add(1))
				o := outcome{id: id, target: target, sent: fmt.Sprintf("%s call %d of worker %d (id %d)", target, n, w, id)}
				var rpc mcptest.RPC
				if target == "ev" {
					rpc = mcptest.ToolCall("ev_echo", `{"message":`+mcptest.Quote(o.sent)+`}`)
				} else {
					// A few milliseconds' work, so that calls are in
					// flight when the upstream is killed.
					rpc = mcptest.ToolCall(target+"_echo", `{"text":`+mcptest.Quote(o.sent)+`,"sleepMs":3}`)
				}
				rpc = rpc.With("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", w+1))
				o.start = time.Since(begin)
				a, err := post(ctx, hc, gw, rpc, id, "")
				o.end = time.Since(begin)
				switch {
				case err != nil:
					o.problem = "no answer: " + err.Error()
				case a.Status != http.StatusOK:
					o.problem = fmt.Sprintf("HTTP %d: %s", a.Status, a.Raw)
				default:
					rs := a.responses()
					if len(rs) != 1 {
						o.problem = fmt.Sprintf("%d responses: %s", len(rs), a.Raw)
						break
					}
					if string(rs[0].ID) != fmt.Sprint(id) {
						o.problem = fmt.Sprintf("the answer of id %s to the request of id %d", rs[0].ID, id)
						break
					}
					text, isError, err := a.text()
					if err != nil {
						o.problem = err.Error()
						break
					}
					o.text, o.isError = text, isError
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}

	// Kill the victim, then start it again on the same port.
	time.Sleep(killAt)
	killing := time.Since(begin)
	victimProc.kill()
	killed := time.Since(begin)
	time.Sleep(startAt - killAt)
	startGo(t, bin, u.Host, victimArgs(victim)...)
	restarted := time.Since(begin)
	wg.Wait()
	t.Logf("%d calls in %v; %s killed at %v, listening again at %v",
		len(outcomes), time.Since(begin).Round(time.Millisecond), victim, killed.Round(time.Millisecond), restarted.Round(time.Millisecond))

	// Zero lost, zero crossed: every request got exactly one answer of
	// its own id, and every successful echo its own text.
	want := func(o outcome) string {
		if o.target == "ev" {
			return "Echo: " + o.sent
		}
		return o.sent
	}
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].start < outcomes[j].start })
	ids := map[int]bool{}
	var lost, crossed int
	for _, o := range outcomes {
		if ids[o.id] {
			t.Errorf("id %d answered twice", o.id)
		}
		ids[o.id] = true
		if o.problem != "" {
			lost++
			if lost <= 10 {
				t.Errorf("%s call id %d at %v: %s", o.target, o.id, o.start, o.problem)
			}
			continue
		}
		if !o.isError && o.text != want(o) {
			crossed++
			if crossed <= 10 {
				t.Errorf("%s call id %d: answered %q, want %q", o.target, o.id, o.text, want(o))
			}
		}
	}
	if int(nextID.Load()) != len(outcomes) || len(ids) != len(outcomes) {
		t.Errorf("%d requests, %d outcomes, %d ids", nextID.Load(), len(outcomes), len(ids))
	}
	t.Logf("lost answers: %d, crossed answers: %d", lost, crossed)

	// The other upstreams: every call succeeded, throughout.
	perTarget := map[string]int{}
	for _, o := range outcomes {
		perTarget[o.target]++
		if o.target != victim && o.problem == "" && (o.isError || o.text != want(o)) {
			t.Errorf("%s call id %d at %v (while %s was down: %v): %q, isError %v",
				o.target, o.id, o.start, victim, o.start > killed && o.start < restarted, o.text, o.isError)
		}
	}
	t.Logf("calls per upstream: %v", perTarget)

	// The victim: before the kill, successes; from the kill to its return,
	// tool errors, answered at once: unreachable, then unavailable once
	// its circuit opened; then successes again, from its circuit's probe
	// on.
	unreachable := "Upstream " + victim + " is unreachable."
	unavailable := regexp.MustCompile(`^Upstream ` + victim + ` is unavailable; the gateway will try it again in [0-9.]+m?s\.$`)
	var (
		down               []time.Duration
		nUnreach, nUnavail int
		firstBack          = time.Duration(-1)
		before, after      int
	)
	for _, o := range outcomes {
		if o.target != victim || o.problem != "" {
			continue
		}
		switch {
		case o.end < killing:
			before++
			if o.isError || o.text != want(o) {
				t.Errorf("%s before the kill, id %d: %q", victim, o.id, o.text)
			}
		case o.start < killed+50*time.Millisecond:
			// In flight at the kill, or just after: any answer that
			// names the upstream is the right one (a stream cut short,
			// a reset connection).
			if o.isError && !strings.HasPrefix(o.text, "Upstream "+victim+" ") {
				t.Errorf("%s at the kill, id %d: %q", victim, o.id, o.text)
			}
		case o.end < restarted:
			down = append(down, o.took())
			switch {
			case !o.isError:
				t.Errorf("%s while down, id %d: succeeded with %q", victim, o.id, o.text)
			case o.text == unreachable:
				nUnreach++
			case unavailable.MatchString(o.text):
				nUnavail++
			default:
				t.Errorf("%s while down, id %d: %q, want %q or the circuit's %q", victim, o.id, o.text, unreachable, unavailable)
			}
			if o.took() > fast {
				t.Errorf("%s while down, id %d: answered in %v, not at once", victim, o.id, o.took())
			}
		default: // started before its return, or after
			if !o.isError && o.text == want(o) {
				after++
				if firstBack < 0 {
					firstBack = o.end
				}
			} else if firstBack >= 0 && o.start > firstBack {
				t.Errorf("%s after it served again (at %v), id %d at %v: %q", victim, firstBack, o.id, o.start, o.text)
			}
		}
	}
	sort.Slice(down, func(i, j int) bool { return down[i] < down[j] })
	if len(down) > 0 {
		t.Logf("%s while down: %d calls (%d unreachable, %d unavailable), answered in %v median, %v at most",
			victim, len(down), nUnreach, nUnavail, down[len(down)/2], down[len(down)-1])
	}
	if before == 0 || len(down) == 0 || nUnavail == 0 {
		t.Errorf("%s: %d successes before the kill, %d calls while down, %d of them answered by the open circuit: the load did not cover each phase", victim, before, len(down), nUnavail)
	}
	switch {
	case firstBack < 0:
		t.Errorf("%s never served again after it was started at %v", victim, restarted)
	case firstBack > restarted+cooldown+1500*time.Millisecond:
		t.Errorf("%s served again only at %v, %v after it was started", victim, firstBack, firstBack-restarted)
	default:
		t.Logf("%s served again at %v (%v after its return), %d successes since", victim, firstBack.Round(time.Millisecond), (firstBack - restarted).Round(time.Millisecond), after)
	}
	if victim == "mgo" {
		// The restarted server knew nothing of the gateway's session
		// (404): the gateway made a new one.
		now, _ := callText(t, context.Background(), gw, "mgo_session", `{}`, "")
		if now == "" || now == session {
			t.Errorf("mcp-go session before the kill %q, after its return %q: want a new one", session, now)
		}
		t.Logf("mcp-go session before the kill %s, after its return %s", session, now)
	}
}

func victimArgs(victim string) []string {
	if victim == "mgo" {
		return []string{"-stateful"}
	}
	return nil
}
