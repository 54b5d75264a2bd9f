package main

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// toolChange is the conformance set's changing half: the tool
// test_trigger_tool_change, each call of which shows or hides the tool
// test_dynamic_tool through wymcp.Server.SetTools, so that the suite's
// listen checks see a change told on their stream
// (sep-2575-server-sends-tools-list-changed-on-subscription; a set that
// may change is served with wymcp.Options.ToolsChange, which advertises
// tools.listChanged and serves subscriptions/listen). The set served is
// the binary's own; a gateway (-upstreams) serves a set of its own making,
// so the binary adds neither tool there.
type toolChange struct {
	trigger, dynamic *tools.Tool

	mu     sync.Mutex
	srv    *wymcp.Server
	served []*tools.Tool // the set as New served it (the trigger among them)
	shown  bool
}

// newToolChange builds the two tools.
func newToolChange() (*toolChange, error) {
	c := &toolChange{}
	var err1, err2 error
	c.trigger, err1 = tools.NewRaw("test_trigger_tool_change", "Changes the tool list: shows test_dynamic_tool, or hides it again; open subscriptions/listen streams are told.", []byte(noArgsSchema),
		func(ctx context.Context, _ []byte) (*protocol.CallToolResult, error) {
			shown, err := c.toggle()
			if err != nil {
				return nil, err
			}
			if shown {
				return protocol.TextResult("test_dynamic_tool is now listed"), nil
			}
			return protocol.TextResult("test_dynamic_tool is no longer listed"), nil
		})
	c.dynamic, err2 = tools.NewRaw("test_dynamic_tool", "Listed after an odd number of calls of test_trigger_tool_change.", []byte(noArgsSchema),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("This tool comes and goes."), nil
		})
	return c, errors.Join(err1, err2)
}

// bind gives the trigger the server and the set it serves.
func (c *toolChange) bind(srv *wymcp.Server, served []*tools.Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.srv, c.served = srv, slices.Clone(served)
}

// toggle serves the set with test_dynamic_tool, or without it, and says
// which.
func (c *toolChange) toggle() (shown bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.srv == nil {
		return false, errors.New("the server is not serving yet")
	}
	next := c.served
	if !c.shown {
		next = append(slices.Clone(c.served), c.dynamic)
	}
	if err := c.srv.SetTools(next...); err != nil {
		return c.shown, err
	}
	c.shown = !c.shown
	return c.shown, nil
}
