// Package fleet is the end-to-end test of cmd/wymcp as a gateway in a fleet
// shaped like a Kubernetes namespace, on one machine: closed-loop clients
// of both eras → a front nginx (deploy/nginx/wymcp.conf) → three gateway
// replicas (cmd/wymcp -tools none -upstreams) → an upstream nginx (the same
// file) → two replicas of cmd/wymcp -tools demo, and → one
// @modelcontextprotocol/server-everything (2025-era, sessionful). Under
// load, one fault at a time: rolling restarts of each tier, a SIGKILL of
// an upstream replica, a restart of server-everything; and a gateway
// started while an upstream is down. Every answer is checked (its id, the
// echoed text, the era's shape) and each phase is reported as a table.
//
// It is its own module, standard library only, and runs only with
// WYMCP_E2E_FLEET=1: nginx from .ci/install-nginx.sh, server-everything from
// interop/gateway's npm packages (interop/gateway/start-everything.sh). The
// figures it must hold are issue 39's; deploy/README.md states them.
package fleet
