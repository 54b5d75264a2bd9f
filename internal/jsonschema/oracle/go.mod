module github.com/wymcp/wymcp/internal/jsonschema/oracle

go 1.26.8

require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

require golang.org/x/text v0.42.0 // indirect
