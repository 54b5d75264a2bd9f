package actors

import (
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// callPool holds the idle tools/call workers. A call takes a worker of its
// own for as long as it runs — so a tool that sleeps ten seconds holds one
// worker and delays nobody — and the worker returns itself when the call is
// answered. The pool grows when every worker is busy and keeps up to maxIdle
// workers for the next burst.
//
// It replaces an actor spawned (and stopped) per call: the same isolation
// and the same supervision, without the spawn's allocations, registry
// insert and lifecycle messages on every request, which under load were a
// large share of the server's CPU (bench/README.md, "Numbers behind the
// code's comments").
//
// The idle workers are kept in shards (see shards.go). A call takes from a
// random shard and, when that one is empty, from the first other shard that
// is not, so that sequential calls reuse one worker instead of spawning one
// per shard; a shard's count is read without its lock to skip empty ones.
type callPool struct {
	shards  []callShard
	maxIdle int // over all shards
	spawn   func() *actor.PID
	stop    func(*actor.PID)
}

type callShard struct {
	mu   sync.Mutex
	idle []*actor.PID
	n    atomic.Int32 // len(idle), readable without mu
	_    cacheLinePad
}

// newCallPool returns a pool of shards shards (a power of two, as
// shardCount gives) keeping up to maxIdle idle workers in all.
func newCallPool(shards, maxIdle int, spawn func() *actor.PID, stop func(*actor.PID)) *callPool {
	return &callPool{shards: make([]callShard, shards), maxIdle: maxIdle, spawn: spawn, stop: stop}
}

// get returns an idle worker, or a new one.
func (p *callPool) get() *actor.PID {
	first := pickShard(len(p.shards))
	for i := range p.shards {
		s := &p.shards[(first+i)&(len(p.shards)-1)]
		if s.n.Load() == 0 {
			continue
		}
		if pid := s.take(); pid != nil {
			return pid
		}
	}
	return p.spawn()
}

func (s *callShard) take() *actor.PID {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.idle)
	if n == 0 {
		return nil
	}
	pid := s.idle[n-1]
	s.idle[n-1] = nil
	s.idle = s.idle[:n-1]
	s.n.Store(int32(n - 1))
	return pid
}

// put returns a worker whose call is over. Past its shard's share of
// maxIdle the worker is stopped instead, so a burst does not leave its peak
// size behind forever. Idle workers cost ~850 bytes each and no goroutine.
func (p *callPool) put(pid *actor.PID) {
	s := &p.shards[pickShard(len(p.shards))]
	limit := max(p.maxIdle/len(p.shards), 1)
	s.mu.Lock()
	if len(s.idle) < limit {
		s.idle = append(s.idle, pid)
		s.n.Store(int32(len(s.idle)))
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	p.stop(pid)
}

// idleCount returns the idle workers in all shards.
func (p *callPool) idleCount() int {
	n := 0
	for i := range p.shards {
		n += int(p.shards[i].n.Load())
	}
	return n
}
