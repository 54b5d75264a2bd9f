module github.com/wymcp/wymcp/interop/oauth/check

go 1.26.8

require github.com/wymcp/wymcp v0.0.0

require github.com/goccy/go-json v0.12.0 // indirect

// The check starts the authorization server with the test helpers of the
// library's repository (internal/mcptest), which cmd/wymcp's end-to-end
// test uses too; the workspace (go.work at the root) uses ../../.. as
// well, and this replace keeps GOWORK=off builds on the same tree.
replace github.com/wymcp/wymcp => ../../..
