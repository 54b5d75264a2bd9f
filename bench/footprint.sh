#!/usr/bin/env bash
# footprint.sh: what one tools/call executes and misses in the L1 caches,
# wymcp beside the bare handler, counted by valgrind's callgrind
# (cmd/footprint). Counts, not timings: they do not move with the machine.
#
#   bench/footprint.sh [-n N]
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "footprint.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
n=200
[ "${1:-}" = -n ] && n=$2
dir=$(mktemp -d)
go build -o "$dir/footprint" ./cmd/footprint
echo "| server | instructions | L1i misses | L1d misses | (per request, $n requests, L1d emptied before each) |"
echo "|---|---:|---:|---:|---|"
for s in wymcp bare; do
	GOMAXPROCS=1 valgrind --tool=callgrind --cache-sim=yes --toggle-collect=main.measured \
		--callgrind-out-file="$dir/$s.callgrind" "$dir/footprint" -n "$n" "$s" 2>&1 |
		awk -v s="$s" -v n="$n" '$2 == "Collected" {
			gsub(",", ""); printf "| %s | %d | %d | %d | |\n", s, $4 / n, $7 / n, ($8 + $9) / n }'
done
echo
echo "by function: callgrind_annotate --auto=no --show=Ir,I1mr,D1mr --sort=I1mr $dir/{wymcp,bare}.callgrind"
