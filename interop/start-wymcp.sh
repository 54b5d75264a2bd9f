# Sourced by the interop scripts: start_wymcp builds cmd/wymcp, starts it on
# a free loopback port with the given flags, and sets $url to its endpoint
# and $wymcp_log to its stderr; the server is stopped and its files removed
# when the sourcing script exits. $root is the repository's root.
wymcp_tmp="$(mktemp -d)"
wymcp_pid=""
wymcp_log="$wymcp_tmp/err"
stop_wymcp() {
	[ -n "$wymcp_pid" ] && kill "$wymcp_pid" 2>/dev/null && wait "$wymcp_pid" 2>/dev/null
	rm -rf "$wymcp_tmp"
}
trap stop_wymcp EXIT

start_wymcp() {
	(cd "$root" && go build -o "$wymcp_tmp/wymcp" ./cmd/wymcp)
	"$wymcp_tmp/wymcp" -addr 127.0.0.1:0 "$@" >"$wymcp_tmp/out" 2>"$wymcp_log" &
	wymcp_pid=$!
	url=""
	for _ in $(seq 1 100); do
		url="$(sed -n 's/^wymcp listening on //p' "$wymcp_tmp/out")"
		[ -n "$url" ] && return 0
		sleep 0.1
	done
	echo "wymcp did not start:" >&2
	cat "$wymcp_log" >&2
	exit 1
}
