module github.com/wymcp/wymcp/deploy/healthcheck

go 1.26.8
