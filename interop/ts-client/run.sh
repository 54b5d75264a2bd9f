#!/usr/bin/env bash
# Runs a real published MCP client (TypeScript SDK v2, pinned to 2026-07-28)
# against cmd/wymcp on a free loopback port: discover, list, calls, progress;
# then the client's own subscriptions/listen against -tools conformance
# (whose set changes), directly and through a gateway (-upstreams) in front
# of it.
# Usage: bash interop/ts-client/run.sh   (installs its npm packages itself)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

cd "$here"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi

# shellcheck source=../start-wymcp.sh
. "$root/interop/start-wymcp.sh"
start_wymcp
node client.mjs "$url"

# The listen checks: a second server (-tools conformance) and a gateway in
# front of it, each on a free loopback port, stopped when this script exits.
more_pids=()
stop_more() {
	for p in "${more_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	stop_wymcp
}
trap stop_more EXIT
# start_more starts the binary start_wymcp built with the given flags
# (its stdout in $1) and sets $more_url to its endpoint.
start_more() {
	local out="$1"
	shift
	: >"$out"
	"$wymcp_tmp/wymcp" -addr 127.0.0.1:0 "$@" >"$out" 2>"$out.err" &
	more_pids+=($!)
	more_url=""
	for _ in $(seq 1 100); do
		more_url="$(sed -n 's/^wymcp listening on //p' "$out")"
		[ -n "$more_url" ] && return 0
		sleep 0.1
	done
	echo "wymcp did not start:" >&2
	cat "$out.err" >&2
	exit 1
}
start_more "$wymcp_tmp/conformance" -tools conformance
conformance_url="$more_url"
printf 'upstreams:\n  - {name: conf, url: %q, prefix: conf_}\n' "$conformance_url" >"$wymcp_tmp/upstreams.yaml"
start_more "$wymcp_tmp/gateway" -tools none -upstreams "$wymcp_tmp/upstreams.yaml"
gateway_url="$more_url"
node listen.mjs "$conformance_url"
node listen.mjs "$gateway_url"
