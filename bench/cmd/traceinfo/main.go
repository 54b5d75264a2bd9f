// Command traceinfo reads execution traces (the ones bench/cmd/tail takes
// with -trace) and says how much of the latency tail the garbage collector
// explains: the share of the traced time a GC mark phase was running, and
// how long goroutines waited to run after becoming runnable, inside a mark
// phase and outside one. With one P, a mark phase takes part of the only
// processor from the request goroutines: if their wait inside mark phases
// is what makes the tail, the trace names the collector.
//
//	go run ./cmd/traceinfo /tmp/traces/wymcp.trace /tmp/traces/bare.trace
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: traceinfo TRACE...")
	}
	fmt.Println("| trace | traced | GC mark phases (share of time) | waits to run: outside GC p50 / p99 / p99.9 µs (n) | inside GC p50 / p99 / p99.9 µs (n) | share of waits > 500 µs that were inside GC |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, path := range os.Args[1:] {
		s, err := study(path)
		if err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		long, longGC := 0, 0
		for _, w := range s.outside {
			if w > 500*time.Microsecond {
				long++
			}
		}
		for _, w := range s.inside {
			if w > 500*time.Microsecond {
				long++
				longGC++
			}
		}
		share := 0.0
		if long > 0 {
			share = 100 * float64(longGC) / float64(long)
		}
		fmt.Printf("| %s | %s | %d (%.1f%%) | %s (%d) | %s (%d) | %.0f%% of %d |\n",
			strings.TrimSuffix(filepath.Base(path), ".trace"), s.span.Round(time.Millisecond),
			s.phases, 100*float64(s.mark)/float64(s.span),
			quantiles(s.outside), len(s.outside), quantiles(s.inside), len(s.inside), share, long)
	}
}

// summary is what one trace says.
type summary struct {
	span, mark      time.Duration
	phases          int
	outside, inside []time.Duration // runnable→running waits
}

func study(path string) (summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return summary{}, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return summary{}, err
	}
	var s summary
	var first, last trace.Time
	var markStart trace.Time
	inMark := false
	runnable := map[trace.GoID]runnableSince{}
	for {
		ev, err := r.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return summary{}, err
		}
		if first == 0 {
			first = ev.Time()
		}
		last = ev.Time()
		switch ev.Kind() {
		case trace.EventRangeBegin:
			if ev.Range().Name == "GC concurrent mark phase" {
				inMark, markStart = true, ev.Time()
				s.phases++
			}
		case trace.EventRangeEnd:
			if ev.Range().Name == "GC concurrent mark phase" && inMark {
				inMark = false
				s.mark += ev.Time().Sub(markStart)
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			id := st.Resource.Goroutine()
			from, to := st.Goroutine()
			switch {
			case to == trace.GoRunnable:
				runnable[id] = runnableSince{at: ev.Time(), gc: inMark}
			case from == trace.GoRunnable && to == trace.GoRunning:
				if w, ok := runnable[id]; ok {
					d := ev.Time().Sub(w.at)
					// A wait that began or ended in a mark phase counts
					// as inside one.
					if w.gc || inMark {
						s.inside = append(s.inside, d)
					} else {
						s.outside = append(s.outside, d)
					}
					delete(runnable, id)
				}
			}
		}
	}
	s.span = last.Sub(first)
	return s, nil
}

type runnableSince struct {
	at trace.Time
	gc bool
}

func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	slices.Sort(ds)
	q := func(p float64) float64 {
		i := int(p * float64(len(ds)-1))
		return float64(ds[i]) / float64(time.Microsecond)
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f", q(0.5), q(0.99), q(0.999))
}
