module github.com/wymcp/wymcp/e2e/nginx

go 1.26.8
