module github.com/wymcp/wymcp/interop/oauth/check

go 1.26.8
