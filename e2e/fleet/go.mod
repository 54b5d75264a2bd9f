module github.com/wymcp/wymcp/e2e/fleet

go 1.26.8
