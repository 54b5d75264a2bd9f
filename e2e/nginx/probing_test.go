package nginx

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// probingBalancer stands in for a balancer that routes by readiness (a
// Kubernetes Service with its readiness probes, a cloud load balancer):
// it probes each replica's /readyz every probeEvery and sends calls, round
// robin, only to the replicas whose last probe said ready, over keep-alive
// connections (Go's reverse proxy, which, like nginx, never resends a POST
// it has sent). Between a replica's SIGTERM and the next probe it still
// sends it calls, on old connections and new ones: the replicas must keep
// accepting for that moment (-drain-accept).
type probingBalancer struct {
	backends []*url.URL
	ready    []atomic.Bool
	next     atomic.Uint64
	proxy    *httputil.ReverseProxy
}

const probeEvery = 200 * time.Millisecond

func newProbingBalancer(ctx context.Context, addrs []string) *probingBalancer {
	b := &probingBalancer{ready: make([]atomic.Bool, len(addrs))}
	for _, a := range addrs {
		b.backends = append(b.backends, &url.URL{Scheme: "http", Host: a})
	}
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}
	b.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(r.In.Context().Value(backendKey{}).(*url.URL))
			r.Out.Host = r.In.Host
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "balancer: "+err.Error(), http.StatusBadGateway)
		},
	}
	for i := range addrs {
		b.probe(i)
		go func() {
			t := time.NewTicker(probeEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					b.probe(i)
				}
			}
		}()
	}
	return b
}

type backendKey struct{}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func (b *probingBalancer) probe(i int) {
	resp, err := probeClient.Get(b.backends[i].String() + "/readyz")
	ok := err == nil && resp.StatusCode == http.StatusOK
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ready[i].Store(ok)
}

func (b *probingBalancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := uint64(len(b.backends))
	for range n {
		i := b.next.Add(1) % n
		if b.ready[i].Load() {
			b.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b.backends[i])))
			return
		}
	}
	http.Error(w, "balancer: no ready replica", http.StatusServiceUnavailable)
}

// TestRollingRestartBehindProbingBalancer: the drain for balancers that
// route by readiness (deploy/k8s/wymcp.yaml's flags: -drain-accept). Calls
// through a balancer that probes /readyz, while every replica is restarted
// in turn: not one may fail or cross.
func TestRollingRestartBehindProbingBalancer(t *testing.T) {
	s := loadSettings(t)
	// The flags of deploy/k8s/wymcp.yaml, with a delay that covers this
	// balancer's probe interval, as the manifest's 5 s covers a kubelet's.
	// (nginx, which newCluster also starts, is not used here.)
	s.extraArgs = append([]string{"-drain-accept", "-drain-delay", "1s"}, s.extraArgs...)
	c := newCluster(t, s, s.replicas)
	var addrs []string
	for _, r := range c.replicas {
		addrs = append(addrs, r.addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	front := &http.Server{Handler: newProbingBalancer(ctx, addrs)}
	ln := listenLoopback(t)
	go front.Serve(ln)
	defer front.Close()
	clients := min(s.clients, 100)
	l := newLoad("http://"+ln.Addr().String()+"/mcp", clients, c.begin)

	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				l.one(l.next.Add(1))
			}
		})
	}
	time.Sleep(time.Second)
	restarts := 0
	var restartErr error
	for i := range c.replicas {
		if restartErr = c.restart(i); restartErr != nil {
			break
		}
		restarts++
		// The restarted replica is probed ready within probeEvery.
		time.Sleep(2 * probeEvery)
	}
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	calls, ok := l.calls.Load(), l.ok.Load()
	total, kinds, _ := l.failures()
	t.Logf("timeline:\n%s", c.report())
	fmt.Printf("e2e-probing: rolling restart behind a balancer probing /readyz every %v, replicas with -drain-accept -drain-delay 1s: calls %d, failed %d, restarts %d\n",
		probeEvery, calls, total, restarts)
	if restartErr != nil {
		t.Fatal(restartErr)
	}
	if calls == 0 || ok == 0 {
		t.Fatal("no call was answered")
	}
	if total > 0 {
		l.mu.Lock()
		t.Errorf("%d of %d calls failed: %s\nfirst failures:\n  %s", total, calls, strings.Join(kinds, ", "), strings.Join(l.samples, "\n  "))
		l.mu.Unlock()
	}
}
