#!/usr/bin/env bash
# Builds the OpenTelemetry Collector described by builder.yaml (beside this
# script) with the OpenTelemetry Collector Builder (ocb), from Go modules
# only, and prints the binary's path as the last line of stdout.
#
# The binary is cached in
#   ${WYMCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wymcp}/otelcol-<hash>/otelcol-wymcp
# where <hash> covers the manifest, the builder's version and the Go
# toolchain: a second run with nothing changed prints the path at once.
# Everything else (the builder's and the collector's logs) goes to stderr.
#
# Needs: go (GOTOOLCHAIN=local is fine with Go >= 1.25), the Go module proxy
# at build time, sha256sum, flock. The compile runs under nice.
set -euo pipefail

# The builder's release; keep it on the manifest's core release line.
OCB_VERSION=v0.161.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifest=$here/builder.yaml
cache=${WYMCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wymcp}

log() { printf 'otelcol/build.sh: %s\n' "$*" >&2; }

go_version=$(go env GOVERSION GOOS GOARCH | tr '\n' ' ')
hash=$({
	cat "$manifest"
	printf 'ocb %s\ngo %s\n' "$OCB_VERSION" "$go_version"
} | sha256sum | cut -c1-16)
dir=$cache/otelcol-$hash
bin=$dir/otelcol-wymcp

if [[ -x $bin ]]; then
	log "cached: $bin"
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$cache"
# One build at a time per manifest: a second caller waits, then finds the
# binary the first one made.
exec 9>"$cache/otelcol-$hash.lock"
flock 9
if [[ -x $bin ]]; then
	log "cached (built meanwhile): $bin"
	printf '%s\n' "$bin"
	exit 0
fi

work=$(mktemp -d "$cache/otelcol-$hash.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

start=$(date +%s)
log "building the collector from $manifest (ocb $OCB_VERSION, $go_version) in $work"
GOBIN=$work/bin nice -n 10 go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION" >&2
# output_path in the manifest is relative: the sources and the binary land
# in $work/build. The builder runs go mod tidy and go build itself.
(cd "$work" && nice -n 10 "$work/bin/builder" --config "$manifest" >&2)

mkdir -p "$dir"
cp "$manifest" "$dir/builder.yaml"
cp "$work/build/otelcol-wymcp" "$dir/otelcol-wymcp.tmp"
mv "$dir/otelcol-wymcp.tmp" "$bin"
log "built in $(($(date +%s) - start)) s: $bin"
printf '%s\n' "$bin"
