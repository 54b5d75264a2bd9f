package actors

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/reqstate"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// tables holds what the methods answer from, built once by precompute: the
// server/discover result and every tools/list page as encoded bytes, and the
// result _meta every tools/call answer carries. The request path only reads.
type tables struct {
	// states seals and opens the requestState of multi-round-trip calls.
	states         *reqstate.Ring
	serverInfo     wire.RawJSON
	serverMeta     wire.RawJSON
	discoverResult []byte
	pages          [][]byte
	// cursors maps each page's cursor to its index. Cursors are MACs, so a
	// lookup is the whole validation: a tampered or foreign cursor is absent.
	cursors map[string]int
}

func precompute(cfg *config.Server) (*tables, error) {
	meta, err := wire.ServerMeta(cfg.Info)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server info: %w", err)
	}
	ttl := cfg.CacheTTL
	// The answers depend on nothing about the caller (there is no
	// authorization yet), so every client may share them.
	scope := wire.CacheScopePublic
	info, err := wire.Marshal(cfg.Info)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server info: %w", err)
	}
	states, err := reqstate.NewRing(cfg.StateKeys, cfg.StateTTL)
	if err != nil {
		return nil, fmt.Errorf("wymcp: the requestState key ring: %w", err)
	}
	t := &tables{states: states, serverInfo: info, serverMeta: meta, cursors: map[string]int{}}
	t.discoverResult, err = wire.Marshal(wire.DiscoverResult{
		ResultType:        wire.ResultTypeComplete,
		SupportedVersions: wire.SupportedVersions(),
		Capabilities:      wire.RawJSON(`{"tools":{}}`),
		Instructions:      cfg.Instructions,
		TTLMs:             ttl.Milliseconds(),
		CacheScope:        scope,
		Meta:              meta,
	})
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server/discover: %w", err)
	}

	size := cfg.PageSize
	all := cfg.Tools.Tools()
	defs := make([]protocol.Tool, len(all))
	for i, tool := range all {
		defs[i] = tool.Definition()
	}
	// The MAC key binds cursors to this tool set: a cursor from a server
	// with other tools (an older deploy) is refused, not misread.
	encoded, err := wire.Marshal(defs)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding tools: %w", err)
	}
	mac := hmac.New(sha256.New, append(append([]byte("wymcp tools/list cursor\x00"), cfg.CursorSecret...), encoded...))
	cursor := func(page int) string {
		mac.Reset()
		mac.Write([]byte(strconv.Itoa(page)))
		return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:18])
	}
	for start, page := 0, 0; start < len(defs) || page == 0; start, page = start+size, page+1 {
		end := min(start+size, len(defs))
		res := wire.ListToolsResult{
			ResultType: wire.ResultTypeComplete,
			Tools:      defs[start:end],
			TTLMs:      ttl.Milliseconds(),
			CacheScope: scope,
			Meta:       meta,
		}
		if end < len(defs) {
			res.NextCursor = cursor(page + 1)
			t.cursors[res.NextCursor] = page + 1
		}
		b, err := wire.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("wymcp: encoding tools/list: %w", err)
		}
		t.pages = append(t.pages, b)
	}
	return t, nil
}

func (t *tables) discover(*Call) Reply {
	return Reply{Result: t.discoverResult}
}

var errCursor = wire.Errorf(wire.CodeInvalidParams, "Invalid params: invalid cursor")

func (t *tables) listTools(c *Call) Reply {
	page := 0
	if c.Request.Cursor != nil {
		cur, ok := c.Request.CursorString()
		if !ok {
			return Reply{Err: errCursor}
		}
		// An empty cursor is valid (spec: pagination) and means the start.
		if cur != "" {
			if page, ok = t.cursors[cur]; !ok {
				return Reply{Err: errCursor}
			}
		}
	}
	return Reply{Result: t.pages[page]}
}

var (
	errName      = wire.Errorf(wire.CodeInvalidParams, "Invalid params: params.name must be a string")
	errArguments = wire.Errorf(wire.CodeInvalidParams, "Invalid params: params.arguments must be an object")
)

// callTool is the tools/call method. Unknown tool, a missing or non-string
// name and non-object arguments are protocol errors (-32602, HTTP 200); all
// that happens inside the tool is a result (DESIGN §5).
func (t *tables) callTool(c *Call) Reply {
	req := c.Request
	if c.Tool == nil {
		// The front resolves the name (by its bytes, making no string);
		// without a tool, the name is decoded here only to say what is wrong.
		name, ok := req.NameString()
		if !ok {
			return Reply{Err: errName}
		}
		return Reply{Err: wire.Errorf(wire.CodeInvalidParams, "Unknown tool: "+truncate(name, 128))}
	}
	if req.Arguments != nil && req.Arguments[0] != '{' {
		return Reply{Err: errArguments}
	}
	prev, perr := t.openRound(c)
	if perr != nil {
		return Reply{Err: perr}
	}
	out := c.Tool.Call(c.Ctx, req.Arguments)
	if out.Fault != nil && c.Op != nil {
		c.Op.Fault(context.WithoutCancel(c.Ctx), "tool", out.Fault.Value, out.Fault.Stack)
	}
	switch out.Kind {
	case tools.OutcomeInputRequired:
		return t.inputRequired(c, prev, out)
	case tools.OutcomeBadInputResponse:
		return Reply{Err: wire.Errorf(wire.CodeInvalidParams, "Invalid params: "+out.BadInput)}
	}
	return t.callResult(out)
}

// callResult encodes a tool's outcome as the tools/call result object. A
// result that cannot be encoded is a fault past the method: it panics, and
// the containment strategy answers -32603 and records why.
func (t *tables) callResult(out tools.Outcome) Reply {
	r := out.Result
	meta := t.serverMeta
	if len(r.Meta) > 0 {
		// The tool's own _meta keys travel beside the server's.
		merged := make(map[string]any, len(r.Meta)+1)
		for k, v := range r.Meta {
			merged[k] = v
		}
		merged[wire.MetaServerInfo] = t.serverInfo
		b, err := wire.Marshal(merged)
		if err != nil {
			panic(fmt.Errorf("encoding the tools/call result's _meta: %w", err))
		}
		meta = b
	}
	body, err := wire.AppendCallToolResult(make([]byte, 0, 192), r, meta)
	if err != nil {
		panic(fmt.Errorf("encoding the tools/call result: %w", err))
	}
	return Reply{Result: body, ToolError: out.Kind != tools.OutcomeOK || r.IsError}
}

// truncate cuts s to at most n bytes on a rune boundary, so that a long
// client-sent name cannot make an error message long.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
