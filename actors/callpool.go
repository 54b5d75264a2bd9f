package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// callPool holds the idle tools/call workers. A call takes a worker of its
// own for as long as it runs — so a tool that sleeps ten seconds holds one
// worker and delays nobody — and the worker returns itself when the call is
// answered. The pool grows when every worker is busy and keeps up to maxIdle
// workers for the next burst.
//
// It replaces an actor spawned (and stopped) per call: the same isolation
// and the same supervision, without the spawn's ~26 allocations, registry
// insert and lifecycle messages on every request (bench/: the spawn was
// ~10% of the server's CPU at 16 connections).
type callPool struct {
	mu      sync.Mutex
	idle    []*actor.PID
	maxIdle int
	spawn   func() *actor.PID
	stop    func(*actor.PID)
}

// get returns an idle worker, or a new one.
func (p *callPool) get() *actor.PID {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		pid := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return pid
	}
	p.mu.Unlock()
	return p.spawn()
}

// put returns a worker whose call is over. Past maxIdle the worker is
// stopped instead, so a burst does not leave its peak size behind forever.
// Idle workers cost ~850 bytes each and no goroutine.
func (p *callPool) put(pid *actor.PID) {
	p.mu.Lock()
	if len(p.idle) < p.maxIdle {
		p.idle = append(p.idle, pid)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.stop(pid)
}
