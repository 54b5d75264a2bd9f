#!/usr/bin/env bash
# Installs nginx from the distribution's packages when it is missing, for the
# end-to-end test behind a real load balancer (e2e/nginx). Idempotent: with
# nginx already on PATH (or in /usr/sbin) it only prints the version.
#
# On Debian 12 the package is `nginx` (the core binary; nginx-light is only
# a meta-package that adds the echo module). The test runs its own nginx
# from a temporary prefix, so the packaged service must not start: a
# policy-rc.d that refuses service starts is put in place for the install
# when the machine has none (container images usually have one already).
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"

if command -v nginx >/dev/null 2>&1; then
	nginx -v 2>&1
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-nginx: nginx is missing and there is no apt-get; install nginx by hand" >&2
	exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi

# Refuse service starts during the install, unless a policy already exists.
policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# added by wymcp .ci/install-nginx.sh for the install only\nexit 101\n' | $sudo tee "$policy" >/dev/null
	$sudo chmod 755 "$policy"
	added_policy=1
fi
cleanup() {
	if [ -n "$added_policy" ]; then
		$sudo rm -f "$policy"
	fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
install() {
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx
}
# apt-get update only when the package lists do not know nginx yet.
if ! apt-cache show nginx >/dev/null 2>&1 || ! install; then
	$sudo apt-get update -q
	install
fi

# If a service manager started the packaged nginx anyway, stop it: nothing
# but the test's own nginx should listen.
if [ -x /etc/init.d/nginx ] && /etc/init.d/nginx status >/dev/null 2>&1; then
	$sudo /etc/init.d/nginx stop >/dev/null 2>&1 || true
fi

nginx -v 2>&1
