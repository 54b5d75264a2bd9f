package actors

import (
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestCallPoolShards: with many shards, sequential calls still reuse one
// worker (get looks past an empty shard before spawning), and a burst keeps
// at most maxIdle idle over all shards.
func TestCallPoolShards(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	spawned, stopped := 0, 0
	p := newCallPool(8, 16, func() *actor.PID {
		mu.Lock()
		defer mu.Unlock()
		spawned++
		return actor.NewPID("test", "w")
	}, func(*actor.PID) { mu.Lock(); stopped++; mu.Unlock() })

	for range 100 {
		p.put(p.get())
	}
	if spawned != 1 || p.idleCount() != 1 {
		t.Fatalf("sequential calls: spawned %d, idle %d; want 1 and 1", spawned, p.idleCount())
	}

	burst := make([]*actor.PID, 200)
	for i := range burst {
		burst[i] = p.get()
	}
	for _, pid := range burst {
		p.put(pid)
	}
	if idle := p.idleCount(); idle > 16 || idle+stopped != 200 {
		t.Fatalf("after a burst of 200: idle %d, stopped %d; want idle <= 16 and the rest stopped", idle, stopped)
	}
}
