#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (FUZZTIME, default 20s each),
# starting from the seed corpora under each package's testdata/fuzz/.
# Run from anywhere: ./.ci/fuzz.sh   or   FUZZTIME=2m ./.ci/fuzz.sh
# A failure leaves the crashing input under testdata/fuzz/<Target>/: commit
# it with the fix, so that plain `go test` replays it from then on.
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
	export PATH="$PATH:/usr/local/go/bin"
fi

fuzztime="${FUZZTIME:-20s}"

# package  target (go test -fuzz takes one target of one package at a time)
targets=(
	"./protocol FuzzParse"
	"./protocol FuzzScanDifferential"
	"./protocol FuzzDecodeHeaderValue"
	". FuzzServeHTTP"
	"./tools FuzzCallArguments"
	"./tools FuzzFastSchema"
)

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	printf '\n==> fuzz %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
	go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg"
done

echo "fuzz: ok"
