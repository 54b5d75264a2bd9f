// Command cglines counts the instruction-cache lines a request runs
// through: the code a core must fetch when it serves a request with cold
// caches, whatever the cache's size or associativity. footprint.sh gives it
// two callgrind files of one handler, made with --dump-instr=yes
// --compress-pos=no --compress-strings=no at N and 2N requests; a 64-byte
// line whose busiest instruction ran at least N/2 more times in the second
// file is a line every request (or nearly) runs through.
//
//	cglines [-top K] N A.callgrind B.callgrind
//
// It prints the count, then the lines by Go package and, with -top, the K
// functions with the most. Where callgrind's simulated misses depend on
// which functions the linker put in the same cache sets, this count does
// not: it moves only when the code a request runs through does.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	top := flag.Int("top", 0, "also print the `K` functions with the most lines")
	flag.Parse()
	n, err := strconv.Atoi(flag.Arg(0))
	if err != nil || flag.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: cglines [-top K] N A.callgrind B.callgrind")
		os.Exit(2)
	}
	a, err := load(flag.Arg(1))
	check(err)
	b, err := load(flag.Arg(2))
	check(err)

	// Each line is charged to the function of its busiest instruction.
	type line struct {
		runs int64
		fn   string
	}
	lines := map[uint64]line{}
	for addr, x := range b {
		d := x.runs - a[addr].runs
		if l := lines[addr>>6]; d > l.runs {
			lines[addr>>6] = line{d, x.fn}
		}
	}
	byPkg, byFn := map[string]int{}, map[string]int{}
	total := 0
	for _, l := range lines {
		if l.runs >= int64(n/2) {
			total++
			byPkg[pkg(l.fn)]++
			byFn[l.fn]++
		}
	}
	fmt.Printf("%d lines (%d KiB) a request\n", total, total*64/1024)
	printTop(byPkg, 1<<30)
	if *top > 0 {
		fmt.Println()
		printTop(byFn, *top)
	}
}

// instr is one instruction's execution count and its function.
type instr struct {
	runs int64
	fn   string
}

// load reads a callgrind file's self cost by instruction address. The first
// event must be Ir; the cost line after a calls= line is the call's
// inclusive cost, charged to the callee, and is skipped.
func load(path string) (map[uint64]instr, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	costs := map[uint64]instr{}
	fn, afterCall := "", false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		t := sc.Text()
		switch {
		case strings.HasPrefix(t, "positions:") && t != "positions: instr line":
			return nil, fmt.Errorf("%s: want positions: instr line (--dump-instr=yes), got %q", path, t)
		case strings.HasPrefix(t, "fn="):
			fn = t[3:]
		case strings.HasPrefix(t, "calls="):
			afterCall = true
		case strings.HasPrefix(t, "0x"):
			if afterCall {
				afterCall = false
				continue
			}
			cost := strings.Fields(t)
			if len(cost) < 3 {
				continue
			}
			addr, err1 := strconv.ParseUint(cost[0][2:], 16, 64)
			runs, err2 := strconv.ParseInt(cost[2], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s: cost line %q (--compress-pos=no?)", path, t)
			}
			c := costs[addr]
			costs[addr] = instr{c.runs + runs, fn}
		}
	}
	return costs, sc.Err()
}

// pkgPath is the import path at the front of a Go function's name.
var pkgPath = regexp.MustCompile(`^(?:[^/]*/)*[^.]*`)

func pkg(fn string) string {
	return pkgPath.FindString(fn)
}

func printTop(counts map[string]int, k int) {
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(counts[y]-counts[x], strings.Compare(x, y))
	})
	for i, name := range names {
		if i == k {
			break
		}
		fmt.Printf("%5d  %s\n", counts[name], name)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cglines:", err)
		os.Exit(1)
	}
}
