package actors

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryBuckets is how many buckets the process registry keeps. Each is a
// concurrent map of 32 locked shards, so 16 buckets are 512 shards: more
// than enough for the few hundred actors a System runs (method workers and
// one call worker per call in flight), at any core count.
const registryBuckets = 16

// shrinkRegistry replaces the process registry's buckets with
// registryBuckets of them, moving what is registered already.
//
// protoactor makes 1024 buckets of 32 shards each: 32,768 maps and ~3 MB
// of pointers that every garbage collection marks, twice the live heap the
// server otherwise needs. Measured under load (bench/), the longer mark
// phases were most of wymcp's p99 excess over a bare net/http handler.
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
