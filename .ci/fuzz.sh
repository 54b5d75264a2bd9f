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
	"./internal/wire FuzzParse"
	"./internal/wire FuzzLexerDifferential"
	"./internal/wire FuzzDecodeHeaderValue"
	"./internal/wire FuzzAppendQuote"
	"./internal/wire FuzzLegacy"
	"./internal/wire FuzzPassThrough"
	". FuzzServeHTTP"
	"./internal/toolrun FuzzCallArguments"
	"./internal/toolrun FuzzFastSchema"
	"./internal/jsonschema/oracle FuzzAgreesWithReference"
	"./auth FuzzBearerToken"
	"./auth FuzzIntrospectionAnswer"
	"./auth FuzzJWTVerify"
	"./auth FuzzParseJWKS"
	"./internal/reqstate FuzzOpenState"
	"./upstream FuzzSSE"
	"./upstream FuzzMessage"
	"./upstream FuzzListPage"
	"./upstream FuzzStdioOutput"
	"./policy FuzzPolicyRule"
	"./cmd/wymcp FuzzUpstreamsFile"
)

# Go 1.26's fuzz coordinator can fail a target with a bare "context
# deadline exceeded" at the -fuzztime boundary, with no failing input
# (go.dev/issue/75804, fixed in Go 1.27). A run fails here only if the
# target failed for another reason or wrote a reproducer.
corpus_files() { { find "$1" -type f 2>/dev/null || true; } | sort; }

for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	printf '\n==> fuzz %s %s (%s)\n' "$pkg" "$name" "$fuzztime"
	dir="${pkg}/testdata/fuzz/${name}"
	before="$(corpus_files "$dir")"
	log="$(mktemp)"
	status=0
	go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$log" || status=$?
	# A target that moved or was renamed matches nothing, and go test
	# reports that as a pass: it is a failure here.
	if grep -q -e 'no fuzz tests to fuzz' -e 'no tests to run' "$log"; then
		echo "fuzz: ${pkg} has no fuzz target ${name}" >&2
		rm -f "$log"
		exit 1
	fi
	if [ "$status" -ne 0 ]; then
		if [ "$(corpus_files "$dir")" = "$before" ] &&
			grep -q 'context deadline exceeded' "$log" &&
			! grep -q -e 'Failing input written' -e '^panic:' -e 'fuzz: minimizing' "$log"; then
			echo "fuzz: ${name}: the coordinator's deadline race (go.dev/issue/75804), no failing input: not a failure"
		else
			rm -f "$log"
			exit "$status"
		fi
	fi
	rm -f "$log"
done

echo "fuzz: ok"
