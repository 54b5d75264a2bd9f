package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryBuckets is how many buckets the process registry keeps. Each is a
// concurrent map of 32 locked shards: one bucket is enough for the few
// hundred actors a System runs (method workers, and one call worker per call
// in flight), since a send finds its process through the PID's cached
// pointer and the registry is only written when a worker is spawned or
// stopped. Every shard is a map the garbage collector marks in each cycle,
// so every bucket past the first is live heap for nothing (bench/README.md,
// "Numbers behind the code's comments").
const registryBuckets = 1

// shrinkRegistry replaces the process registry's buckets with
// registryBuckets of them, moving what is registered already.
//
// protoactor makes 1024 buckets of 32 shards each: 32,768 maps of pointers
// that every garbage collection marks, more than the live heap the server
// otherwise needs. Under load the longer mark phases were most of wymcp's
// p99 excess over a bare net/http handler (bench/README.md, "Where the
// tail comes from").
// It must run before anything but the system's constructor has used the
// registry: the buckets are swapped without a lock.
func shrinkRegistry(sys *actor.ActorSystem) {
	old := sys.ProcessRegistry.LocalPIDs
	small := &actor.SliceMap{LocalPIDs: make([]cmap.ConcurrentMap, registryBuckets)}
	for i := range small.LocalPIDs {
		small.LocalPIDs[i] = cmap.New()
	}
	for _, bucket := range old.LocalPIDs {
		for id, process := range bucket.Items() {
			small.GetBucket(id).Set(id, process)
		}
	}
	sys.ProcessRegistry.LocalPIDs = small
}
