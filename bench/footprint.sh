#!/usr/bin/env bash
# footprint.sh: what one tools/call executes and misses in the L1 caches,
# wymcp beside the bare handler, counted by valgrind's callgrind
# (cmd/footprint). Counts, not timings: they do not move with the machine.
#
#   bench/footprint.sh [-n N]
#
# "Code lines run" counts the 64-byte lines of code a request runs
# through (cmd/cglines): what a core whose caches other work has emptied
# fetches again, whatever the cache's size or layout; the misses are what a
# warm core still loses to the layout.
#
# Each handler runs at N and 2N requests; the difference, less the same
# difference for a handler that only writes a canned answer, divided by N,
# is its own count per request. The collector is off (GOGC=off) so that no
# collection lands in one run and not the other, and asynchronous
# preemption too: callgrind does not survive its signals.
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "footprint.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
n=1000
[ "${1:-}" = -n ] && n=$2
dir=$(mktemp -d)
go build -o "$dir/footprint" ./cmd/footprint
go build -o "$dir/cglines" ./cmd/cglines

# count SERVER REQUESTS prints "Ir I1mr D1mr" (D1mr counts read and write
# misses) for the whole run.
count() {
	GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --cache-sim=yes \
		--dump-instr=yes --compress-pos=no --compress-strings=no \
		--callgrind-out-file="$dir/$1-$2.callgrind" "$dir/footprint" -n "$2" "$1" 2>&1 |
		awk '$2 == "Collected" { gsub(",", ""); print $4, $7, $8 + $9; found = 1 }
			END { if (!found) exit 1 }' ||
		{ echo "footprint.sh: callgrind failed on $1 -n $2" >&2; exit 1; }
}

declare -A delta
for s in none wymcp bare; do
	read -r a1 b1 c1 <<<"$(count "$s" "$n")"
	read -r a2 b2 c2 <<<"$(count "$s" $((2 * n)))"
	delta[$s]="$((a2 - a1)) $((b2 - b1)) $((c2 - c1))"
done
read -r na nb nc <<<"${delta[none]}"
# lines SERVER prints the instruction-cache lines it runs through a
# request (cmd/cglines): what a core with cold caches fetches.
lines() { "$dir/cglines" "$n" "$dir/$1-$n.callgrind" "$dir/$1-$((2 * n)).callgrind" | awk 'NR == 1 { print $1 }'; }
nl=$(lines none)
echo "| per tools/call ($n requests, L1d emptied before each) | instructions | L1i misses | L1d misses | code lines run |"
echo "|---|---:|---:|---:|---:|"
for s in wymcp bare; do
	read -r a b c <<<"${delta[$s]}"
	echo "| $s | $(((a - na) / n)) | $(((b - nb) / n)) | $(((c - nc) / n)) | $(($(lines "$s") - nl)) |"
done

# byPackage SERVER prints the server's L1i misses and instructions per
# request by Go package, from the same difference of its two runs.
byPackage() {
	for k in "$n" $((2 * n)); do
		callgrind_annotate --auto=no --show=Ir,I1mr --threshold=100 "$dir/$1-$k.callgrind" |
			sed -E 's/\([^)]*\)//g; s/,//g' | awk -v sign=$((k == n ? -1 : 1)) '
				$1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $3 !~ /PROGRAM/ {
					fn = $3; sub(/^.*:/, "", fn)
					pkg = fn; if (match(pkg, /^([^\/]*\/)*[^.]*/)) pkg = substr(pkg, 1, RLENGTH)
					print pkg, sign * $1, sign * $2 }'
	done | awk -v n="$n" '{ ir[$1] += $2; miss[$1] += $3 }
		END { for (p in miss) if (miss[p] / n >= 1) printf "| %s | %d | %d |\n", p, miss[p] / n, ir[p] / n }' |
		sort -t'|' -k3 -rn
}
echo
echo "wymcp by package:"
echo "| package | L1i misses | instructions |"
echo "|---|---:|---:|"
byPackage wymcp
echo
echo "wymcp's code lines run, by package (cmd/cglines, whose -top K names functions):"
"$dir/cglines" "$n" "$dir/wymcp-$n.callgrind" "$dir/wymcp-$((2 * n)).callgrind" | tail -n +2 | head -15
echo
echo "callgrind's files, for callgrind_annotate and cglines: $dir"
