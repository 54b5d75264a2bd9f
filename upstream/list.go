package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wymcp/wymcp/internal/strictjson"
	"github.com/wymcp/wymcp/internal/toolrun"
	"github.com/wymcp/wymcp/internal/wire"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// listed is one tool of the upstream's tools/list, its schemas as sent.
type listed struct {
	Name         string                    `json:"name"`
	Title        string                    `json:"title"`
	Description  string                    `json:"description"`
	InputSchema  wire.RawJSON              `json:"inputSchema"`
	OutputSchema wire.RawJSON              `json:"outputSchema"`
	Annotations  *protocol.ToolAnnotations `json:"annotations"`
	Icons        []protocol.Icon           `json:"icons"`
	Meta         map[string]wire.RawJSON   `json:"_meta"`
}

// listPage is one page of tools/list.
type listPage struct {
	// Tools are decoded one by one (listPage): a tool that does not
	// decode is left out, not the page.
	Tools      []wire.RawJSON `json:"tools"`
	tools      []listed
	NextCursor *string `json:"nextCursor"`
	TTLMs      *int64  `json:"ttlMs"`
	// raw is the page's tools as sent, to tell a changed list from the
	// same one.
	raw wire.RawJSON
}

// listing is the upstream's whole tools/list: its tools, the bytes they
// were sent as, and the ttlMs of its first page (0 when it gave none).
type listing struct {
	tools []listed
	raw   []byte
	ttl   time.Duration
}

// Bounds on one upstream's tools/list: an upstream that pages forever
// must not hold Connect forever.
const (
	maxPages = 1000
	maxTools = 10000
	// maxListFactor bounds the whole tools/list: that many times
	// MaxResponseBytes (64 MiB by default).
	maxListFactor = 16
)

// listTools reads every page of the upstream's tools/list.
func (c *client) listTools(ctx context.Context) (*listing, error) {
	var (
		all    = &listing{}
		cursor *string
		seen   = map[string]bool{}
		count  int
	)
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("more than %d pages", maxPages)
		}
		p, err := c.listPage(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all.tools = append(all.tools, p.tools...)
		all.raw = append(all.raw, p.raw...)
		if int64(len(all.raw)) > maxListFactor*c.maxBytes {
			return nil, fmt.Errorf("the tools are larger than %d bytes", maxListFactor*c.maxBytes)
		}
		if page == 0 && p.TTLMs != nil && *p.TTLMs > 0 {
			all.ttl = time.Duration(*p.TTLMs) * time.Millisecond
		}
		if count += len(p.Tools); count > maxTools {
			return nil, fmt.Errorf("more than %d tools", maxTools)
		}
		if p.NextCursor == nil {
			return all, nil
		}
		if seen[*p.NextCursor] {
			return nil, fmt.Errorf("the cursor %q came back: the pages loop", truncate(*p.NextCursor, 64))
		}
		seen[*p.NextCursor] = true
		cursor = p.NextCursor
	}
}

// listPage asks for the page at cursor (nil: the first).
func (c *client) listPage(ctx context.Context, cursor *string) (listPage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	defer cancel()
	id := c.ids.Add(1)
	body := c.appendHead(nil, id, wire.MethodToolsList)
	body = append(body, `,"params":{`...)
	if cursor != nil {
		body = append(body, `"cursor":`...)
		body = wire.AppendString(body, *cursor)
	}
	if !c.legacy {
		if cursor != nil {
			body = append(body, ',')
		}
		body = append(body, `"_meta":`...)
		body = c.appendMeta(body, nil, 0, "", "")
	}
	body = append(body, "}}"...)
	m, err := c.call(ctx, &request{id: id, method: wire.MethodToolsList, body: body})
	if err != nil {
		return listPage{}, err
	}
	if m.err != nil {
		return listPage{}, fmt.Errorf("error %d: %s", m.err.code, truncate(m.err.message, maxMessage))
	}
	var p listPage
	if err := strictjson.Unmarshal(m.result, &p); err != nil {
		return listPage{}, fmt.Errorf("the result does not read: %w", err)
	}
	if p.Tools == nil {
		return listPage{}, errors.New("the result has no tools array")
	}
	p.raw, _ = strictjson.Member(m.result, "tools")
	p.tools = c.decodeTools(p.Tools)
	return p, nil
}

// decodeTools decodes the tools of a tools/list page one by one: a tool
// that does not decode (a member of the wrong type) is left out and
// logged, as a tool the gateway cannot serve is (serve).
func (c *client) decodeTools(raws []wire.RawJSON) []listed {
	out := make([]listed, 0, len(raws))
	for _, raw := range raws {
		var l listed
		if err := strictjson.Unmarshal(raw, &l); err != nil {
			name, _ := strictjson.Member(raw, "name")
			n, _ := strictjson.Unquote(name)
			c.log.Warn("upstream tool left out", "upstream", c.name, "tool", truncate(n, 128), "reason", err.Error())
			continue
		}
		out = append(out, l)
	}
	return out
}

// serve builds the served tools of the listed ones that the filters
// admit, under their served names (servedAs). A tool the gateway cannot
// serve (no name, an input schema that is not an object, invalid
// x-mcp-header declarations, a served name it cannot have) is left out and
// logged, not fatal: the upstream's other tools are still served.
func (c *client) serve(list []listed, o Options) ([]*tools.Tool, error) {
	c.unknownOverrides(list, o.Overrides)
	if len(list) == 0 {
		return nil, nil
	}
	for _, p := range slices.Concat(o.Include, o.Exclude) {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("filter %q: %w", p, err)
		}
	}
	var kept []listed
	seen := make(map[string]bool, len(list))
	for _, l := range list {
		if !admitted(l.Name, o.Include, o.Exclude) {
			continue
		}
		if seen[l.Name] {
			// Both would forward to the same upstream tool.
			c.leftOut(l.Name, "its name repeats an earlier tool's")
			continue
		}
		seen[l.Name] = true
		kept = append(kept, l)
	}
	served := c.servedAs(kept, o)
	var out []*tools.Tool
	for i, l := range kept {
		if served[i] == "" {
			continue
		}
		t, err := c.build(l, served[i], o)
		if err != nil {
			c.leftOut(l.Name, err.Error())
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// leftOut logs an upstream tool the gateway does not serve, by the
// upstream's name, and why.
func (c *client) leftOut(tool, reason string) {
	c.log.Warn("upstream tool left out", "upstream", c.name, "tool", truncate(tool, 128), "reason", reason)
}

// servedAs returns the served name of each kept tool, "" for one left out
// (and logged). A tool with an override's Name is served under it, when it
// is a valid name (validName, as Options.Validate requires) that no tool before it in the upstream's
// order was given; the others get servedNames' names of Prefix and their
// own, and one whose name an override took is left out: the operator named
// that tool on purpose, the other by rule (Override.Name).
func (c *client) servedAs(kept []listed, o Options) []string {
	out := make([]string, len(kept))
	var (
		auto   []string // the upstream's names of the tools named by rule
		autoAt []int    // and their places in kept
		taken  = map[string]bool{}
	)
	for i, l := range kept {
		name := o.Overrides[l.Name].Name
		switch {
		case name == "":
			auto, autoAt = append(auto, l.Name), append(autoAt, i)
		case !validName(name):
			c.leftOut(l.Name, fmt.Sprintf("its override's name %q is not 1 to %d characters of A-Z a-z 0-9 _ . -", truncate(name, 128), maxName))
		case taken[name]:
			c.leftOut(l.Name, fmt.Sprintf("its override's name %q is an earlier tool's override's", name))
		default:
			out[i], taken[name] = name, true
		}
	}
	for j, name := range servedNames(o.Prefix, auto) {
		if taken[name] {
			c.leftOut(auto[j], fmt.Sprintf("its served name %q is another tool's override's", name))
			continue
		}
		out[autoAt[j]] = name
	}
	return out
}

// unknownOverrides logs each override of a tool the upstream does not
// list: a mistyped name, or a tool the upstream dropped. Not an error: the
// upstream may list it again. serve runs when the list changes, so each
// is logged once per change, never per call.
func (c *client) unknownOverrides(list []listed, overrides map[string]Override) {
	if len(overrides) == 0 {
		return
	}
	listedNames := make(map[string]bool, len(list))
	for _, l := range list {
		listedNames[l.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if !listedNames[name] {
			c.log.Warn("upstream tool override names no tool of the upstream", "upstream", c.name, "tool", truncate(name, 128))
		}
	}
}

// build makes the served tool of l.
func (c *client) build(l listed, served string, o Options) (*tools.Tool, error) {
	if l.Name == "" {
		return nil, errors.New("no name")
	}
	if strictjson.Kind(l.InputSchema) != '{' {
		return nil, errors.New("its inputSchema is not an object")
	}
	if l.OutputSchema != nil && strictjson.Kind(l.OutputSchema) != '{' {
		l.OutputSchema = nil // 2025-era upstreams may send null
	}
	// The operator's word over the upstream's (Override).
	ov := o.Overrides[l.Name]
	if ov.Title != "" {
		l.Title = ov.Title
	}
	if ov.Description != "" {
		l.Description = ov.Description
	}
	if ov.Annotations != nil {
		a := *ov.Annotations
		l.Annotations = &a
	}
	def := wire.Tool{
		Name:         served,
		Title:        l.Title,
		Description:  l.Description,
		InputSchema:  l.InputSchema,
		OutputSchema: l.OutputSchema,
		Annotations:  l.Annotations,
		Icons:        l.Icons,
	}
	if len(l.Meta) > 0 {
		def.Meta = make(map[string]any, len(l.Meta))
		for k, v := range l.Meta {
			def.Meta[k] = v
		}
	}
	scopes := slices.Concat(o.Scopes, o.ToolScopes[l.Name])
	quoted, err := strictjson.Marshal(l.Name)
	if err != nil {
		return nil, err
	}
	// The served hints decide retries: an override's when it has one.
	r := &remote{name: l.Name, served: served, quoted: quoted, header: []string{headerValue(l.Name)}, idempotent: idempotent(l.Annotations)}
	rt, err := toolrun.NewForward(def, c.callTimeout, scopes, c.forward(r))
	if err != nil {
		return nil, err
	}
	r.headers = rt.HeaderParams()
	// The tool's own rule and limit first, then the upstream's
	// (docs/design.md §11); a limit's key is its place.
	rt = toolrun.Guarded(rt, o.Name,
		toolrun.Guard{Rule: ov.Allow, Limit: ov.RateLimit, Key: "tool:" + served},
		toolrun.Guard{Rule: o.Allow, Limit: o.RateLimit, Key: "upstream:" + o.Name})
	return toolrun.Wrap(rt).(*tools.Tool), nil
}

// admitted applies the filters to an upstream tool's name.
func admitted(name string, include, exclude []string) bool {
	in := len(include) == 0
	for _, p := range include {
		if ok, _ := path.Match(p, name); ok {
			in = true
			break
		}
	}
	for _, p := range exclude {
		if ok, _ := path.Match(p, name); ok {
			return false
		}
	}
	return in
}

// maxName is the longest served name: what model APIs accept as a
// function name, shorter than the 128 the MCP tool-name rule allows.
const maxName = 64

// servedNames returns the served name of each of the upstream's names:
// prefix and name, each character outside the tool-name alphabet A-Z a-z
// 0-9 _ . - replaced by '_'. A name then longer than maxName, or the same
// as another's, keeps its first bytes and ends in '-' and 8 hex digits of the SHA-256 of the
// prefix and the upstream's name: the names depend on nothing but the
// prefix and the names, so every replica and every restart serves the
// same ones.
func servedNames(prefix string, names []string) []string {
	out := make([]string, len(names))
	count := map[string]int{}
	for i, n := range names {
		out[i] = sanitize(prefix + n)
		count[out[i]]++
	}
	for i, n := range names {
		if len(out[i]) > maxName || count[out[i]] > 1 {
			sum := sha256.Sum256([]byte(prefix + "\x00" + n))
			keep := min(len(out[i]), maxName-9)
			out[i] = out[i][:keep] + "-" + hex.EncodeToString(sum[:4])
		}
	}
	// A hashed name could, in theory, equal another name: the later one
	// gets a longer hash, and then a counter, until it is unique.
	seen := map[string]bool{}
	for i, n := range names {
		for k := 0; seen[out[i]]; k++ {
			sum := sha256.Sum256([]byte(prefix + "\x00" + n + "\x00" + strconv.Itoa(k)))
			base := sanitize(prefix + n)
			keep := min(len(base), maxName-17)
			out[i] = base[:keep] + "-" + hex.EncodeToString(sum[:8])
		}
		seen[out[i]] = true
	}
	return out
}

// sanitize replaces each character outside the tool-name alphabet with '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, s)
}
