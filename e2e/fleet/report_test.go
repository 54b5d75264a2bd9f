package fleet

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// phase is a span of the load, from the end of the one before; a call
// belongs to the phase it was sent in.
type phase struct {
	name       string
	start, end time.Duration
}

// tally is what the calls of one phase came to.
type tally struct {
	calls, legacy, failed, crossed int
	kinds                          map[string]int // failure kind → count
	byTarget                       map[string]*targetTally
	p50, p99, max                  time.Duration
}

type targetTally struct {
	calls, failed int
	took          []time.Duration
}

// targetName names a call's upstream in the tables.
func targetName(o outcome) string {
	if o.target < 0 {
		return "initialize"
	}
	return targets[o.target].key
}

func tallyOf(outs []outcome, p phase) tally {
	tl := tally{kinds: map[string]int{}, byTarget: map[string]*targetTally{}}
	var took []time.Duration
	for _, o := range outs {
		if o.start < p.start || o.start >= p.end {
			continue
		}
		tl.calls++
		if o.legacy {
			tl.legacy++
		}
		tt := tl.byTarget[targetName(o)]
		if tt == nil {
			tt = &targetTally{}
			tl.byTarget[targetName(o)] = tt
		}
		tt.calls++
		tt.took = append(tt.took, o.end-o.start)
		took = append(took, o.end-o.start)
		if o.kind != "" {
			tl.failed++
			tt.failed++
			tl.kinds[targetName(o)+": "+o.kind]++
			if o.crossed() {
				tl.crossed++
			}
		}
	}
	tl.p50, tl.p99 = percentiles(took)
	if len(took) > 0 {
		tl.max = took[len(took)-1] // sorted by percentiles
	}
	return tl
}

// percentiles are the 50th and 99th of the durations (nearest rank).
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) time.Duration {
		i := int(q*float64(len(d))+0.5) - 1
		return d[min(max(i, 0), len(d)-1)]
	}
	return at(0.50), at(0.99)
}

// failedOf is the phase's failed calls to one upstream.
func (tl tally) failedOf(key string) int {
	if tt := tl.byTarget[key]; tt != nil {
		return tt.failed
	}
	return 0
}

// table is the phase's table, as printed for CI logs and the figures of
// deploy/README.md.
func (tl tally) table(p phase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "e2e-fleet: phase %q, %.1fs–%.1fs: calls %d (2025-11-25 %d), failed %d, crossed %d, p50 %v, p99 %v, max %v\n",
		p.name, p.start.Seconds(), p.end.Seconds(), tl.calls, tl.legacy, tl.failed, tl.crossed, ms(tl.p50), ms(tl.p99), ms(tl.max))
	fmt.Fprintf(&b, "  %-14s %8s %8s %9s %9s\n", "upstream", "calls", "failed", "p50", "p99")
	var names []string
	for k := range tl.byTarget {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		tt := tl.byTarget[k]
		p50, p99 := percentiles(tt.took)
		fmt.Fprintf(&b, "  %-14s %8d %8d %9v %9v\n", k, tt.calls, tt.failed, ms(p50), ms(p99))
	}
	if len(tl.kinds) > 0 {
		var kinds []string
		for k, v := range tl.kinds {
			kinds = append(kinds, fmt.Sprintf("    %6d  %s", v, k))
		}
		sort.Strings(kinds)
		b.WriteString("  failed by kind:\n" + strings.Join(kinds, "\n") + "\n")
	}
	return b.String()
}

// ms rounds a latency for the tables.
func ms(d time.Duration) time.Duration {
	if d >= 10*time.Millisecond {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
