package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wymcp/wymcp/tools"
)

// toolSets names the tool sets the binary can serve (the -tools flag). Each
// entry builds its tools afresh, so that a set is only built when chosen and
// a bad tool fails start-up with its error instead of a panic at init
// (nothing is built as a side effect of importing the package).
// "conformance" serves the fixtures of the official MCP conformance suite
// (conformance/run.sh); "none" serves no tool of its own, for a gateway
// (-upstreams).
var toolSets = map[string]toolSet{
	"demo":        {build: demoTools, serverName: "wymcp-demo"},
	"conformance": {build: conformanceTools, serverName: "wymcp-conformance", changes: true},
	toolSetNone:   {build: func() ([]*tools.Tool, error) { return nil, nil }, serverName: "wymcp"},
}

// toolSet is one entry of toolSets.
type toolSet struct {
	build func() ([]*tools.Tool, error)
	// serverName is the serverInfo name of a binary serving the set
	// without -name: a client shown wymcp-demo expects the demo's tools,
	// so a server names itself after what it serves (a gateway, with
	// -tools none, as wymcp).
	serverName string
	// changes: served alone (no -upstreams), the set changes while it
	// serves, through test_trigger_tool_change (toolchange.go).
	changes bool
}

// toolSetNone is the empty set: with -upstreams, a pure gateway.
const toolSetNone = "none"

// toolSetNames returns the known set names, sorted, for usage and errors.
func toolSetNames() []string { return slices.Sorted(maps.Keys(toolSets)) }

// buildToolSet builds the named set; an unknown name is a usage error.
func buildToolSet(name string) ([]*tools.Tool, error) {
	set, ok := toolSets[name]
	if !ok {
		return nil, usageError{err: fmt.Errorf("unknown tool set %q; known sets: %s", name, strings.Join(toolSetNames(), ", "))}
	}
	ts, err := set.build()
	if err != nil {
		return nil, fmt.Errorf("tool set %q: %w", name, err)
	}
	return ts, nil
}
