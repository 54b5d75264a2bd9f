#!/usr/bin/env bash
# Runs cmd/wymcp as a gateway in front of MCP servers nobody here wrote,
# end to end (interop/gateway/README.md): @modelcontextprotocol/server-everything
# (npm, pinned in package.json), a go-sdk v1.8.0 server in its stateless
# 2026-07-28 mode and an mcp-go v1.2.1 server, each a child process of the
# test, with the real authorization server of interop/oauth for the auth
# test. Installs the npm packages (this directory's and interop/oauth's)
# when needed, then runs the module's tests with WYMCP_E2E_GATEWAY=1.
# Usage: bash interop/gateway/run.sh [go test flags, e.g. -run Killed -count=3]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

# npm ci writes node_modules/.package-lock.json last: reinstall when it is
# missing or older than the lock file.
for dir in "$here" "$root/interop/oauth"; do
	stamp="$dir/node_modules/.package-lock.json"
	if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
	fi
done

cd "$here"
WYMCP_E2E_GATEWAY=1 go test -count=1 -timeout 5m -v "$@" ./...
