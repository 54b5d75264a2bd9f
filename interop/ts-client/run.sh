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

# shellcheck source=../start-wymcp.sh
. "$root/interop/start-wymcp.sh"
start_wymcp
node client.mjs "$url"
