package actors

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/wymcp/wymcp/internal/config"
	"github.com/wymcp/wymcp/internal/reqstate"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
)

// tables holds what the methods answer from, built once by precompute: the
// server/discover result and every tools/list page as encoded bytes, and the
// result _meta every tools/call answer carries. The request path only reads.
// The tool lists are replaced whole when the server's tool set is
// (System.SetTools); everything else is fixed.
type tables struct {
	// states seals and opens the requestState of multi-round-trip calls.
	states         *reqstate.Ring
	serverInfo     wire.RawJSON
	serverMeta     wire.RawJSON
	discoverResult []byte
	// lists are the tools/list answers of the current tool set.
	lists atomic.Pointer[toolLists]
	// params and versions are what building the lists needs.
	params   listParams
	versions []string
	// legacy holds the initialize result of each served 2025 revision;
	// empty when none is served.
	legacy map[string]*eraTables
}

// toolLists are the tools/list answers of one tool set: list, the list
// every caller sees when no tool is scoped, or scoped, which builds each
// caller's own (scopedlist.go); and the same in each served 2025 revision's
// shapes.
type toolLists struct {
	list   *listing
	scoped *scopedLists
	eras   map[string]*toolLists
	// sum digests what the lists show and to whom: every definition, and
	// every tool's scopes (which decide who sees it). Two sets with the
	// same sum list alike for every caller, so replacing one with the
	// other tells no listen stream (System.SetTools).
	sum [sha256.Size]byte
}

// eraTables is what the methods answer a 2025-era request from, besides
// its lists: the initialize result that negotiated the revision.
type eraTables struct {
	initialize []byte
}

// listing is one tools/list, paged: each page's encoded result, and the
// cursors that lead to them.
type listing struct {
	pages [][]byte
	// cursors maps each page's cursor to its index. Cursors are MACs, so a
	// lookup is the whole validation: a tampered or foreign cursor is absent.
	cursors map[string]int
}

// listParams is what every listing of one server shares.
type listParams struct {
	// legacy makes the pages the 2025 era's shape (docs/design.md §1a).
	legacy bool
	size   int
	ttlMs  int64
	scope  string
	meta   wire.RawJSON
	macKey []byte
	secret []byte
	// access asks the tools' rules (scopedlist.go).
	access *config.Access
}

func precompute(cfg *config.Server) (*tables, error) {
	meta, err := wire.ServerMeta(cfg.Info)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server info: %w", err)
	}
	ttl := cfg.CacheTTL
	info, err := wire.AppendImplementation(nil, cfg.Info)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server info: %w", err)
	}
	states, err := reqstate.NewRing(cfg.StateKeys, cfg.StateTTL)
	if err != nil {
		return nil, fmt.Errorf("wymcp: the requestState key ring: %w", err)
	}
	t := &tables{states: states, serverInfo: info, serverMeta: meta, versions: cfg.Versions.List()}
	// server/discover names no tool and depends on nothing about the
	// caller, so every client may share it, whatever the authorization.
	t.discoverResult, err = wire.AppendDiscoverResult(nil, wire.DiscoverResult{
		ResultType:        wire.ResultTypeComplete,
		SupportedVersions: cfg.Versions.List(),
		Capabilities:      capabilities(cfg.ToolsChange),
		Instructions:      cfg.Instructions,
		TTLMs:             ttl.Milliseconds(),
		CacheScope:        wire.CacheScopePublic,
		Meta:              meta,
	})
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding server/discover: %w", err)
	}
	for _, v := range t.versions[1:] {
		e := &eraTables{}
		if e.initialize, err = wire.AppendInitializeResult(nil, v, cfg.Info, cfg.Instructions); err != nil {
			return nil, fmt.Errorf("wymcp: encoding the initialize result: %w", err)
		}
		if t.legacy == nil {
			t.legacy = map[string]*eraTables{}
		}
		t.legacy[v] = e
	}
	t.params = listParams{
		size:   cfg.PageSize,
		ttlMs:  ttl.Milliseconds(),
		scope:  wire.CacheScopePublic,
		meta:   meta,
		secret: cfg.CursorSecret,
		access: cfg.Access,
	}
	lists, err := t.buildLists(cfg.Tools)
	if err != nil {
		return nil, err
	}
	t.lists.Store(lists)
	return t, nil
}

// buildLists encodes the tools/list answers of set, in every revision
// served.
func (t *tables) buildLists(set *toolrun.Set) (*toolLists, error) {
	all := set.Tools()
	defs := make([]wire.Tool, len(all))
	for i, tool := range all {
		defs[i] = tool.Definition()
	}
	// The MAC key binds cursors to this tool set: a cursor from a server
	// with other tools (an older deploy, or the set before a SetTools) is
	// refused, not misread.
	encoded, err := wire.AppendTools(nil, defs)
	if err != nil {
		return nil, fmt.Errorf("wymcp: encoding tools: %w", err)
	}
	p := t.params
	p.macKey = append(append([]byte("wymcp tools/list cursor\x00"), p.secret...), encoded...)
	l := &toolLists{sum: listSum(encoded, all)}
	if l.list, l.scoped, err = p.lists(all, defs); err != nil {
		return nil, err
	}
	for _, v := range t.versions[1:] {
		shaped := make([]wire.Tool, len(defs))
		for i, d := range defs {
			shaped[i] = wire.LegacyTool(d, v)
		}
		lp := p
		lp.legacy = true
		e := &toolLists{}
		if e.list, e.scoped, err = lp.lists(all, shaped); err != nil {
			return nil, err
		}
		if l.eras == nil {
			l.eras = map[string]*toolLists{}
		}
		l.eras[v] = e
	}
	return l, nil
}

// listSum is toolLists.sum: the digest of the encoded definitions, then of
// each tool's scopes in the set's order (each scope and each tool ended by
// a byte no scope holds).
func listSum(encoded []byte, all []*toolrun.Tool) [sha256.Size]byte {
	d := sha256.New()
	d.Write(encoded)
	for _, t := range all {
		for _, s := range t.Scopes() {
			d.Write([]byte(s))
			d.Write([]byte{0})
		}
		for _, g := range t.Guards() {
			if g.Rule != nil {
				d.Write([]byte(ruleName(g.Rule)))
				d.Write([]byte{0})
			}
		}
		d.Write([]byte{1})
	}
	var sum [sha256.Size]byte
	d.Sum(sum[:0])
	return sum
}

// lists returns the tools/list of every caller when no tool is scoped, or
// the scoped lists that build each caller's own.
func (p listParams) lists(all []*toolrun.Tool, defs []wire.Tool) (*listing, *scopedLists, error) {
	if scoped := newScopedLists(all, defs, p); scoped != nil {
		// Pages that depend on the caller's scopes may be reused only
		// within the same authorization context (spec: caching), and all
		// pages of one list share one cacheScope.
		return nil, scoped, nil
	}
	l, err := p.build(defs, nil)
	return l, nil, err
}

// build encodes the pages of a list of defs. subset, when not nil, names
// the caller's visible subset (scopedlist.go) and goes into the cursors'
// MAC, so that a cursor is valid only for the subset it was made for.
func (p listParams) build(defs []wire.Tool, subset []byte) (*listing, error) {
	l := &listing{cursors: map[string]int{}}
	mac := hmac.New(sha256.New, p.macKey)
	cursor := func(page int) string {
		mac.Reset()
		if subset != nil {
			mac.Write(subset)
			mac.Write([]byte{0})
		}
		mac.Write([]byte(strconv.Itoa(page)))
		return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:18])
	}
	size := p.size
	for start, page := 0, 0; start < len(defs) || page == 0; start, page = start+size, page+1 {
		end := min(start+size, len(defs))
		res := wire.ListToolsResult{
			ResultType: wire.ResultTypeComplete,
			Tools:      defs[start:end],
			TTLMs:      p.ttlMs,
			CacheScope: p.scope,
			Meta:       p.meta,
		}
		if p.legacy {
			res = wire.ListToolsResult{Tools: defs[start:end]}
		}
		if end < len(defs) {
			res.NextCursor = cursor(page + 1)
			l.cursors[res.NextCursor] = page + 1
		}
		b, err := wire.AppendListToolsResult(nil, res)
		if err != nil {
			return nil, fmt.Errorf("wymcp: encoding tools/list: %w", err)
		}
		l.pages = append(l.pages, b)
	}
	return l, nil
}

// capabilities is server/discover's capabilities: tools, and listChanged
// only when the server serves subscriptions/listen, which it does when its
// set may change (config.Server.ToolsChange): the conformance suite, like a
// client, reads the capability as the promise that a listen stream is
// served (docs/design.md §5a).
func capabilities(listChanged bool) wire.RawJSON {
	if listChanged {
		return wire.RawJSON(`{"tools":{"listChanged":true}}`)
	}
	return wire.RawJSON(`{"tools":{}}`)
}

func (t *tables) discover(*Call) Reply {
	return Reply{Result: t.discoverResult}
}

// era returns the eraTables of a 2025-era request, nil for a 2026-07-28
// one. It reads c.Request: the requester's goroutine only (a late path
// reads Call.legacy, which Ask sets from it).
func (t *tables) era(c *Call) *eraTables {
	if t.legacy == nil {
		return nil
	}
	return t.legacy[c.Request.Meta.ProtocolVersion]
}

// initialize answers a 2025-era client's initialize with the result of the
// revision it negotiated (wire.LegacyVersion).
func (t *tables) initialize(c *Call) Reply {
	return Reply{Result: t.era(c).initialize}
}

// ping answers a 2025-era ping: an empty result.
func (t *tables) ping(*Call) Reply { return Reply{Result: emptyResult} }

var emptyResult = []byte(`{}`)

var errCursor = wire.Errorf(wire.CodeInvalidParams, "Invalid params: invalid cursor")

func (t *tables) listTools(c *Call) Reply {
	lists := t.lists.Load()
	if t.era(c) != nil {
		lists = lists.eras[c.Request.Meta.ProtocolVersion]
	}
	l, scoped := lists.list, lists.scoped
	if scoped != nil {
		l = scoped.listing(c.Ctx)
	}
	page := 0
	if c.Request.Cursor != nil {
		cur, ok := c.Request.CursorString()
		if !ok {
			return Reply{Err: errCursor}
		}
		// An empty cursor is valid (spec: pagination) and means the start.
		if cur != "" {
			if page, ok = l.cursors[cur]; !ok {
				return Reply{Err: errCursor}
			}
		}
	}
	return Reply{Result: l.pages[page]}
}

var (
	errName      = wire.Errorf(wire.CodeInvalidParams, "Invalid params: params.name must be a string")
	errArguments = wire.Errorf(wire.CodeInvalidParams, "Invalid params: params.arguments must be an object")
)

// callTool is the tools/call method. Unknown tool, a missing or non-string
// name and non-object arguments are protocol errors (-32602, HTTP 200); all
// that happens inside the tool is a result (docs/design.md §5).
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
	// Ask has read the era (it asks for a tool, which this call has).
	legacy := c.legacy
	out := c.Tool.Call(c.Ctx, req.Arguments)
	for round := 1; legacy && out.Kind == toolrun.OutcomeInputRequired; round++ {
		// A 2025-era client is asked on the call's own stream, and the
		// tool runs again with its answers (relay.go).
		out = t.relay(c, out, round)
	}
	if out.Fault != nil && c.Op != nil {
		c.Op.Fault(context.WithoutCancel(c.Ctx), "tool", out.Fault.Value, out.Fault.Stack)
	}
	switch out.Kind {
	case toolrun.OutcomeInputRequired:
		return t.inputRequired(c, prev, out)
	case toolrun.OutcomeRefused:
		// A forwarded tool's upstream refused what the client sent, with
		// an error the client can act on (docs/design.md §10a). -32021
		// exists only in 2026-07-28: a 2025-era client reads it as the
		// tool error it is in its revision.
		if legacy && out.Refusal.Code == wire.CodeMissingRequiredClientCapability {
			return t.callResult(legacy, toolrun.Outcome{Result: protocol.ErrorResult(out.Refusal.Message), Kind: toolrun.OutcomeToolError})
		}
		return Reply{Err: out.Refusal}
	case toolrun.OutcomeBadInputResponse:
		if legacy {
			// The 2025 era's answers are the client's responses, not a
			// request's inputResponses: the call ends as a tool error.
			return t.callResult(legacy, relayFailure("the client's answer to "+out.BadMethod+" is not a valid result"))
		}
		return Reply{Err: wire.Errorf(wire.CodeInvalidParams, "Invalid params: "+out.BadInput)}
	}
	return t.callResult(legacy, out)
}

// callResult encodes a tool's outcome as the tools/call result object, in
// the 2025 era's shape when legacy. A result that cannot be encoded is a
// fault past the method: it panics, and the containment strategy answers
// -32603 and records why.
func (t *tables) callResult(legacy bool, out toolrun.Outcome) Reply {
	if out.Raw != nil {
		return t.forwardedResult(legacy, out)
	}
	r := out.Result
	var meta wire.RawJSON
	if !legacy {
		meta = t.serverMeta
	}
	if len(r.Meta) > 0 {
		// The tool's own _meta keys travel beside the server's (2025: alone).
		merged := make(map[string]any, len(r.Meta)+1)
		for k, v := range r.Meta {
			merged[k] = v
		}
		if !legacy {
			merged[wire.MetaServerInfo] = t.serverInfo
		}
		b, err := wire.Marshal(merged)
		if err != nil {
			panic(fmt.Errorf("encoding the tools/call result's _meta: %w", err))
		}
		meta = b
	}
	encode := wire.AppendCallToolResult
	if legacy {
		encode = wire.AppendLegacyCallToolResult
	}
	body, err := encode(make([]byte, 0, 192), r, meta)
	if err != nil {
		panic(fmt.Errorf("encoding the tools/call result: %w", err))
	}
	return Reply{Result: body, ToolError: out.Kind != toolrun.OutcomeOK || r.IsError}
}

// forwardedResult is callResult for a forwarded tool's result: the
// upstream's bytes, spliced with the server's resultType and _meta.
func (t *tables) forwardedResult(legacy bool, out toolrun.Outcome) Reply {
	body, err := wire.AppendForwardedResult(make([]byte, 0, len(out.Raw)+len(t.serverInfo)+64), out.Raw, t.serverInfo, legacy)
	if err != nil {
		panic(fmt.Errorf("splicing the upstream's tools/call result: %w", err))
	}
	return Reply{Result: body, ToolError: out.Kind != toolrun.OutcomeOK}
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

// ruleName is what listSum knows a rule by, so that a set whose rules
// changed tells the listen streams: its text when it has one (a policy
// rule's expression); for a rule held by pointer (or a map, a chan), its
// type and address, never what it points to, which the embedder may
// change under its own lock while the set is built; its type and value
// when that is a plain value (a string, a number); else, a func above all
// (closures of one literal share their code, whatever they captured), a
// name of its own each time, so that a set rebuilt with such a rule tells
// the streams once more than needed rather than never.
func ruleName(r any) string {
	if s, ok := r.(fmt.Stringer); ok {
		return fmt.Sprintf("%T\x00%s", r, s.String())
	}
	switch v := reflect.ValueOf(r); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return fmt.Sprintf("%T\x00%#x", r, v.Pointer())
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return fmt.Sprintf("%T\x00%v", r, v)
	}
	return fmt.Sprintf("%T\x00#%d", r, ruleNames.Add(1))
}

// ruleNames numbers the rules ruleName cannot name by their value.
var ruleNames atomic.Uint64
