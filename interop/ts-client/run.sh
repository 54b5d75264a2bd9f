#!/usr/bin/env bash
# Runs a real published MCP client (TypeScript SDK v2, pinned to 2026-07-28)
# against cmd/wymcp on a free loopback port: discover, list, calls, progress.
# Usage: bash interop/ts-client/run.sh   (installs its npm packages itself)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

cd "$here"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi

tmp="$(mktemp -d)"
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$root" && go build -o "$tmp/wymcp" ./cmd/wymcp)
"$tmp/wymcp" -addr 127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
url=""
for _ in $(seq 1 100); do
	url="$(sed -n 's/^wymcp listening on //p' "$tmp/out")"
	[ -n "$url" ] && break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "wymcp did not start:" >&2
	cat "$tmp/err" >&2
	exit 1
fi
node client.mjs "$url"
