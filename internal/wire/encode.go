package wire

import (
	"strconv"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/protocol"
)

// The results a server precomputes when it is built — server/discover, the
// tools/list pages, the tool definitions in them, the server's own name —
// are encoded here by hand, in the order and form the JSON encoder would
// give (encode_test.go holds them to it).
//
// Why by hand, for bytes made once: the encoder compiles, for each type it
// meets, a program it keeps for the life of the process, and those of these
// types were live heap that every garbage collection marks again; with one
// core, that work is taken from the requests in flight, and it was a
// measurable part of the latency tail (bench/README.md, "Where the tail
// comes from"). Only a tool's free-form _meta, when it has
// one, still goes through the encoder.

// AppendDiscoverResult appends r as a JSON object to dst.
func AppendDiscoverResult(dst []byte, r DiscoverResult) ([]byte, error) {
	var err error
	dst = append(dst, `{"resultType":`...)
	if dst, err = appendQuote(dst, r.ResultType); err != nil {
		return nil, err
	}
	dst = append(dst, `,"supportedVersions":`...)
	if dst, err = appendStrings(dst, r.SupportedVersions); err != nil {
		return nil, err
	}
	dst = append(dst, `,"capabilities":`...)
	if dst, err = appendCompact(dst, r.Capabilities); err != nil {
		return nil, err
	}
	if r.Instructions != "" {
		dst = append(dst, `,"instructions":`...)
		if dst, err = appendQuote(dst, r.Instructions); err != nil {
			return nil, err
		}
	}
	return appendCacheable(dst, r.TTLMs, r.CacheScope, r.Meta)
}

// AppendListToolsResult appends r as a JSON object to dst. Without a
// ResultType it is the 2025 era's result: the tools and the next cursor,
// none of 2026-07-28's resultType, ttlMs, cacheScope and _meta.
func AppendListToolsResult(dst []byte, r ListToolsResult) ([]byte, error) {
	var err error
	if r.ResultType == "" {
		dst = append(dst, '{')
	} else {
		dst = append(dst, `{"resultType":`...)
		if dst, err = appendQuote(dst, r.ResultType); err != nil {
			return nil, err
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"tools":`...)
	if dst, err = AppendTools(dst, r.Tools); err != nil {
		return nil, err
	}
	if r.NextCursor != "" {
		dst = append(dst, `,"nextCursor":`...)
		if dst, err = appendQuote(dst, r.NextCursor); err != nil {
			return nil, err
		}
	}
	if r.ResultType == "" {
		return append(dst, '}'), nil
	}
	return appendCacheable(dst, r.TTLMs, r.CacheScope, r.Meta)
}

// appendCacheable appends the members every cacheable result ends with,
// and the closing brace.
func appendCacheable(dst []byte, ttlMs int64, scope string, meta RawJSON) ([]byte, error) {
	var err error
	dst = append(dst, `,"ttlMs":`...)
	dst = strconv.AppendInt(dst, ttlMs, 10)
	dst = append(dst, `,"cacheScope":`...)
	if dst, err = appendQuote(dst, scope); err != nil {
		return nil, err
	}
	dst = append(dst, `,"_meta":`...)
	if dst, err = appendCompact(dst, meta); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// AppendTools appends ts as a JSON array to dst.
func AppendTools(dst []byte, ts []Tool) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i := range ts {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = AppendTool(dst, &ts[i]); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// AppendTool appends t as a JSON object to dst: a tool as tools/list shows
// it, with its schemas as the bytes it was built with.
func AppendTool(dst []byte, t *Tool) ([]byte, error) {
	var err error
	dst = append(dst, `{"name":`...)
	if dst, err = appendQuote(dst, t.Name); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"title":`, t.Title); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"description":`, t.Description); err != nil {
		return nil, err
	}
	dst = append(dst, `,"inputSchema":`...)
	if dst, err = appendCompact(dst, t.InputSchema); err != nil {
		return nil, err
	}
	if len(t.OutputSchema) > 0 {
		dst = append(dst, `,"outputSchema":`...)
		if dst, err = appendCompact(dst, t.OutputSchema); err != nil {
			return nil, err
		}
	}
	if a := t.Annotations; a != nil {
		mark := len(dst)
		dst = append(dst, `,"annotations":{`...)
		start := len(dst)
		if a.Title != "" {
			dst = append(dst, `"title":`...)
			if dst, err = appendQuote(dst, a.Title); err != nil {
				return nil, err
			}
		}
		for _, h := range [...]struct {
			name string
			v    *bool
		}{{"readOnlyHint", a.ReadOnlyHint}, {"destructiveHint", a.DestructiveHint}, {"idempotentHint", a.IdempotentHint}, {"openWorldHint", a.OpenWorldHint}} {
			if h.v == nil {
				continue
			}
			if len(dst) > start {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, h.name...)
			dst = append(dst, `":`...)
			dst = strconv.AppendBool(dst, *h.v)
		}
		if len(dst) == start {
			// omitempty leaves out an object that encodes as {}.
			dst = dst[:mark]
		} else {
			dst = append(dst, '}')
		}
	}
	if len(t.Icons) > 0 {
		dst = append(dst, `,"icons":`...)
		if dst, err = appendIcons(dst, t.Icons); err != nil {
			return nil, err
		}
	}
	if len(t.Meta) > 0 {
		meta, err := Marshal(t.Meta)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, meta...)
	}
	return append(dst, '}'), nil
}

// AppendImplementation appends impl as a JSON object to dst.
func AppendImplementation(dst []byte, impl protocol.Implementation) ([]byte, error) {
	var err error
	dst = append(dst, `{"name":`...)
	if dst, err = appendQuote(dst, impl.Name); err != nil {
		return nil, err
	}
	dst = append(dst, `,"version":`...)
	if dst, err = appendQuote(dst, impl.Version); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"title":`, impl.Title); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"description":`, impl.Description); err != nil {
		return nil, err
	}
	if dst, err = appendOptString(dst, `,"websiteUrl":`, impl.WebsiteURL); err != nil {
		return nil, err
	}
	if len(impl.Icons) > 0 {
		dst = append(dst, `,"icons":`...)
		if dst, err = appendIcons(dst, impl.Icons); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendIcons(dst []byte, icons []protocol.Icon) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i, ic := range icons {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"src":`...)
		if dst, err = appendQuote(dst, ic.Src); err != nil {
			return nil, err
		}
		if dst, err = appendOptString(dst, `,"mimeType":`, ic.MimeType); err != nil {
			return nil, err
		}
		if len(ic.Sizes) > 0 {
			dst = append(dst, `,"sizes":`...)
			if dst, err = appendStrings(dst, ic.Sizes); err != nil {
				return nil, err
			}
		}
		if dst, err = appendOptString(dst, `,"theme":`, ic.Theme); err != nil {
			return nil, err
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendOptString appends key and s when s is not empty (omitempty).
func appendOptString(dst []byte, key, s string) ([]byte, error) {
	if s == "" {
		return dst, nil
	}
	dst = append(dst, key...)
	return appendQuote(dst, s)
}

func appendStrings(dst []byte, ss []string) ([]byte, error) {
	if ss == nil {
		return append(dst, "[]"...), nil
	}
	var err error
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendQuote(dst, s); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendCompact appends v without its insignificant white space, as the
// encoder writes a RawJSON member; an absent one is null.
func appendCompact(dst []byte, v RawJSON) ([]byte, error) {
	if len(v) == 0 {
		return append(dst, "null"...), nil
	}
	start := len(dst)
	dst = append(dst, v...)
	c := jsontext.Value(dst[start:])
	if err := c.Compact(); err != nil {
		return nil, err
	}
	return append(dst[:start], c...), nil
}

// appendQuote appends s as a JSON string, escaped as jsontext.AppendQuote
// escapes it (an error for invalid UTF-8). Nearly every string of an
// answer (a result type, a tool's name, an echoed text) is printable ASCII
// without a quote or a backslash, which needs no escape: that is copied
// between quotes here, and only the rest goes to jsontext, whose quoting
// runs through code in two packages, fetched again by every request on a
// core whose caches other work emptied (bench/footprint.sh).
func appendQuote(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return jsontext.AppendQuote(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}
