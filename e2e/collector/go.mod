module github.com/wymcp/wymcp/e2e/collector

go 1.26
