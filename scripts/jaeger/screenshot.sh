#!/usr/bin/env bash
# Shows wymcp's contained faults in Jaeger, end to end, and takes a picture:
#   1. builds Jaeger v2 (scripts/jaeger/build.sh, cached) and cmd/wymcp;
#   2. starts Jaeger on free loopback ports (config.yaml beside this script,
#      in-memory storage, the trace view in ui/ as its UI assets);
#   3. starts cmd/wymcp exporting its traces to Jaeger over OTLP/HTTP, calls
#      the demo tools bad_result (supervisor containment: -32603) and panic
#      (tool containment: an isError result), and stops it with SIGTERM,
#      which flushes its spans;
#   4. waits until both traces can be queried through Jaeger's HTTP API, and
#      opens the contained panic's trace in headless Chromium, with its span
#      and exception event expanded (screenshot.mjs, playwright-core);
#   5. writes docs/images/jaeger-contained-panic.png (or $SCREENSHOT_OUT).
# Everything binds to 127.0.0.1 and is stopped on exit.
#
# Installs what is missing: Chromium from Debian (apt-get, as root) and
# playwright-core from npm (npm ci, into scripts/jaeger/node_modules).
# WYMCP_BIN names a prebuilt cmd/wymcp; JAEGER_UI_ASSETS another UI build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${SCREENSHOT_OUT:-$root/docs/images/jaeger-contained-panic.png}
chromium_bin=${CHROMIUM:-/usr/bin/chromium}

log() { printf 'jaeger/screenshot.sh: %s\n' "$*" >&2; }
began=$(date +%s)

# --- tools ------------------------------------------------------------------
if [[ ! -x $chromium_bin ]]; then
	log "installing chromium from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq chromium >&2 || { apt-get update -qq >&2 && apt-get install -y -qq chromium >&2; }
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	log "installing node and npm from Debian"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq nodejs npm >&2 || { apt-get update -qq >&2 && apt-get install -y -qq nodejs npm >&2; }
fi
if [[ ! -f $here/node_modules/playwright-core/package.json ]]; then
	log "installing playwright-core (package-lock.json)"
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

jaeger=$("$here/build.sh" | tail -n 1)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/wymcp-jaeger.XXXXXX")
pids=()
cleanup() {
	local status=$?
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if ((status != 0)); then
		for f in "$tmp"/*.log; do
			[[ -f $f ]] || continue
			log "--- tail of $f"
			tail -n 40 "$f" >&2
		done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
# A signal ends the script through exit, so the EXIT trap stops the children.
trap 'exit 130' INT TERM

if [[ -n ${WYMCP_BIN:-} ]]; then
	wymcp=$WYMCP_BIN
else
	log "building cmd/wymcp"
	wymcp=$tmp/wymcp
	(cd "$root/cmd/wymcp" && nice -n 10 go build -trimpath -o "$wymcp" .)
fi

# --- Jaeger -----------------------------------------------------------------
# Four ports that were free a moment ago (held together, so they differ).
read -r otlp_grpc otlp_http query_http query_grpc < <(node -e '
const net = require("net");
const servers = [0, 1, 2, 3].map(() => net.createServer());
Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", r)))).then(() => {
  console.log(servers.map((s) => s.address().port).join(" "));
  servers.forEach((s) => s.close());
});')
base=http://127.0.0.1:$query_http

log "starting Jaeger: OTLP gRPC $otlp_grpc, HTTP $otlp_http; query HTTP $query_http, gRPC $query_grpc"
JAEGER_OTLP_GRPC_PORT=$otlp_grpc JAEGER_OTLP_HTTP_PORT=$otlp_http \
	JAEGER_QUERY_HTTP_PORT=$query_http JAEGER_QUERY_GRPC_PORT=$query_grpc \
	JAEGER_UI_ASSETS=${JAEGER_UI_ASSETS:-$here/ui} \
	"$jaeger" --config "$here/config.yaml" >"$tmp/jaeger.log" 2>&1 &
pids+=($!)
jaeger_pid=$!

ready=
for _ in $(seq 1 300); do
	if ! kill -0 "$jaeger_pid" 2>/dev/null; then
		log "Jaeger exited"
		exit 1
	fi
	if curl -sf -o /dev/null "$base/api/services" &&
		[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$otlp_http/v1/traces") != 000 ]]; then
		ready=1
		break
	fi
	sleep 0.2
done
[[ -n $ready ]] || { log "Jaeger did not come up in 60 s"; exit 1; }

# --- wymcp --------------------------------------------------------------------
log "starting cmd/wymcp, exporting to Jaeger over OTLP/HTTP"
OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$otlp_http OTEL_METRICS_EXPORTER=none \
	OTEL_SERVICE_NAME=wymcp OTEL_BSP_SCHEDULE_DELAY=100 \
	"$wymcp" -addr 127.0.0.1:0 >"$tmp/wymcp.out" 2>"$tmp/wymcp.log" &
pids+=($!)
wymcp_pid=$!
url=
for _ in $(seq 1 150); do
	line=$(head -n 1 "$tmp/wymcp.out" 2>/dev/null || true)
	if [[ $line == "wymcp listening on "* ]]; then
		url=${line#wymcp listening on }
		break
	fi
	kill -0 "$wymcp_pid" 2>/dev/null || { log "wymcp exited"; exit 1; }
	sleep 0.2
done
[[ -n $url ]] || { log "wymcp printed no listening line in 30 s"; exit 1; }

# mcp_call ID TOOL: a tools/call of a demo tool that takes no arguments.
mcp_call() {
	curl -sS --max-time 10 "$url" \
		-H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' \
		-H 'MCP-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: tools/call' \
		-H "Mcp-Name: $2" \
		-d '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"'"$2"'","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
}
answer=$(mcp_call 1 bad_result)
[[ $answer == *'"code":-32603'* ]] || { log "bad_result answered: $answer"; exit 1; }
answer=$(mcp_call 2 panic)
[[ $answer == *'"isError":true'* ]] || { log "panic answered: $answer"; exit 1; }
log "called bad_result (-32603) and panic (isError); stopping wymcp (SIGTERM flushes its spans)"
kill -TERM "$wymcp_pid"
wait "$wymcp_pid"

# --- the picture --------------------------------------------------------------
mkdir -p "$(dirname "$out")"
mkdir -p "$tmp/profile"
JAEGER_URL=$base SERVICE=wymcp OUT=$out CHROMIUM=$chromium_bin PROFILE_DIR=$tmp/profile \
	node "$here/screenshot.mjs"
log "done in $(($(date +%s) - began)) s"
printf '%s\n' "$out"
