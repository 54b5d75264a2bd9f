#!/usr/bin/env bash
# Builds Jaeger v2 (github.com/jaegertracing/jaeger/cmd/jaeger, a collector
# distribution with the query service) from the Go module proxy and prints
# the binary's path as the last line of stdout.
#
# The binary is cached in
#   ${WYMCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wymcp}/jaeger-<hash>/jaeger
# where <hash> covers this script's pins and the Go toolchain: a second run
# prints the path at once. Logs go to stderr.
#
# The module does not carry the built Jaeger UI (cmd/query/app/ui/actual is
# filled by Jaeger's own Makefile from the jaeger-ui repository), so a binary
# built this way serves a placeholder page at / unless
# extensions.jaeger_query.ui.assets_path points at a UI build. The HTTP
# query API (/api/...) works either way. See scripts/README.md.
#
# `go install module/cmd@version` refuses a module whose go.mod has replace
# directives, and Jaeger's has one; so the build runs in a throwaway main
# module that requires Jaeger at the pinned version and repeats that replace.
set -euo pipefail

# Module v1.75.0 is Jaeger v2's release of the same tag pair (v1.x / v2.x).
JAEGER_MODULE_VERSION=v1.75.0
# The replace directive in Jaeger v1.75.0's go.mod, repeated here.
JAEGER_REPLACES=(github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0)

cache=${WYMCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wymcp}

log() { printf 'jaeger/build.sh: %s\n' "$*" >&2; }

go_version=$(go env GOVERSION GOOS GOARCH | tr '\n' ' ')
hash=$(printf 'jaeger %s\nreplaces %s\ngo %s\n' "$JAEGER_MODULE_VERSION" "${JAEGER_REPLACES[*]}" "$go_version" |
	sha256sum | cut -c1-16)
dir=$cache/jaeger-$hash
bin=$dir/jaeger

if [[ -x $bin ]]; then
	log "cached: $bin"
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/jaeger-$hash.lock"
flock 9
if [[ -x $bin ]]; then
	log "cached (built meanwhile): $bin"
	printf '%s\n' "$bin"
	exit 0
fi

work=$(mktemp -d "$cache/jaeger-$hash.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$(date +%s)
log "building github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_MODULE_VERSION ($go_version) in $work"
(
	cd "$work"
	go mod init wymcp.local/jaeger-build 2>&1 >&2
	for r in "${JAEGER_REPLACES[@]}"; do
		go mod edit -replace "$r"
	done
	# Jaeger is the only requirement, so the build list is the one its own
	# go.mod pins.
	GOFLAGS=-mod=mod go get "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_MODULE_VERSION" >&2
	CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags '-s -w' -o "$work/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger >&2
)

mkdir -p "$dir"
cp "$work/go.mod" "$work/go.sum" "$dir/"
cp "$work/jaeger" "$dir/jaeger.tmp"
mv "$dir/jaeger.tmp" "$bin"
log "built in $(($(date +%s) - start)) s: $bin"
printf '%s\n' "$bin"
