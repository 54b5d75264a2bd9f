// Package nginx is an end-to-end test of cmd/wymcp deployed as its users
// deploy it: several replicas behind nginx, configured with the repository's
// recommended front (deploy/nginx/wymcp.conf), under sustained load while
// the replicas are restarted one at a time. It is its own module, standard
// library only, and runs only with WYMCP_E2E_NGINX=1 (see nginx_test.go and
// deploy/nginx/README.md).
package nginx
