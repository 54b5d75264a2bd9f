package wire

import (
	"bytes"
	"testing"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// FuzzPassThrough: an upstream's tools/call result, read by
// ParseUpstreamResult and spliced by AppendForwardedResult for either
// era, never panics. A complete result that ParseUpstreamResult accepts
// is spliced (the server cannot answer otherwise), and a splice is one
// strict JSON object (no name twice) whose members are the upstream's as
// it wrote them, in its order, but resultType and _meta: for 2026-07-28
// resultType "complete" first and a _meta with the server's serverInfo;
// for the 2025 era no resultType, no serverInfo, and no structuredContent
// that is not an object. The upstream's other _meta members are kept.
func FuzzPassThrough(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}`,
		`{"content":[{"type":"text","text":"it failed as it always does"}],"isError":true,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}`,
		`{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"AduOy2gvkv7DxmvNFCxOf7mkyPGlTAkyOdVcipsaQT_S8QA6","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"origin","version":"1.0.0"}}}`,
		`{"content":[]}`,
		`{}`,
		` { "content" : [ 1 , 2 ] , "x" : { "y" : null } } `,
		`{"content":[],"structuredContent":[1,2]}`,
		`{"content":[],"structuredContent":"s"}`,
		`{"content":[],"_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{},"l":[true]}}`,
		`{"content":[],"_meta":{}}`,
		`{"content":[],"result\u0054ype":"complete","\u005fmeta":{"io.modelcontextprotocol\/serverInfo":1,"\u00e9":2}}`,
		`{"content":[],"a\"b":1,"\u2028":2,"\ud83d\ude00":3}`,
		`{"content":[],"content":[]}`,
		`{"content":[],"isError":"true"}`,
		`{"resultType":"input_required","requestState":"s"}`,
		`{"resultType":"input_required","inputRequests":{"a":{"method":"sampling/createMessage"},"b":{"method":"roots/list","params":{}}}}`,
		`{"resultType":"partial","content":[]}`,
		`[]`, `null`, `{`, `{"content":[]} {}`,
	} {
		f.Add([]byte(s))
	}
	serverInfo := RawJSON(`{"name":"gateway","version":"1.0.0"}`)
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, perr := ParseUpstreamResult(raw)
		if perr == nil && !strictjson.Valid(raw) {
			t.Fatalf("ParseUpstreamResult accepted %q, which is not strict JSON", raw)
		}
		for _, legacy := range []bool{false, true} {
			prefix := []byte("prefix")
			out, err := AppendForwardedResult(bytes.Clone(prefix), raw, serverInfo, legacy)
			if err != nil {
				if perr == nil && !res.InputRequired {
					t.Fatalf("legacy %v: ParseUpstreamResult accepted %q, but it cannot be spliced: %v", legacy, raw, err)
				}
				continue
			}
			if !bytes.HasPrefix(out, prefix) {
				t.Fatalf("the splice lost what dst held: %q", out)
			}
			out = out[len(prefix):]
			if !strictjson.Valid(out) {
				t.Fatalf("legacy %v: splice of %q is not strict JSON: %q", legacy, raw, out)
			}
			checkSplice(t, raw, out, serverInfo, legacy)
		}
	})
}

// fwdMember is one member of an object: its name by meaning and its value as
// written.
type fwdMember struct {
	name  string
	value []byte
}

func fwdMembers(t *testing.T, v []byte) []fwdMember {
	t.Helper()
	var (
		l   strictjson.Lexer
		o   strictjson.Object
		out []fwdMember
	)
	l.Reset(v)
	defer l.Close()
	if err := l.OpenObject(&o, nil); err != nil {
		t.Fatalf("not an object: %q", v)
	}
	for {
		name, ok, err := l.Member(&o)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if !ok {
			return out
		}
		start, end, err := l.Value()
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		out = append(out, fwdMember{string(name), v[start:end]})
	}
}

// checkSplice checks the splice out of raw (see FuzzPassThrough).
func checkSplice(t *testing.T, raw, out []byte, serverInfo RawJSON, legacy bool) {
	t.Helper()
	in, got := fwdMembers(t, raw), fwdMembers(t, out)
	var (
		want   []fwdMember
		inMeta []byte
	)
	if !legacy {
		want = append(want, fwdMember{"resultType", []byte(`"complete"`)})
	}
	for _, m := range in {
		switch {
		case m.name == "resultType":
		case m.name == "_meta":
			inMeta = m.value
		case m.name == "structuredContent" && legacy && m.value[0] != '{':
		default:
			want = append(want, m)
		}
	}
	var metaWant []fwdMember
	if !legacy {
		metaWant = append(metaWant, fwdMember{MetaServerInfo, serverInfo})
	}
	if inMeta != nil {
		for _, m := range fwdMembers(t, inMeta) {
			if m.name != MetaServerInfo {
				metaWant = append(metaWant, m)
			}
		}
	}
	if len(metaWant) > 0 {
		want = append(want, fwdMember{"_meta", nil})
	}
	if len(got) != len(want) {
		t.Fatalf("legacy %v: splice of %q is %q: %d members, want %d", legacy, raw, out, len(got), len(want))
	}
	for i := range want {
		if got[i].name != want[i].name {
			t.Fatalf("legacy %v: splice of %q is %q: member %d is %q, want %q", legacy, raw, out, i, got[i].name, want[i].name)
		}
		if want[i].name == "_meta" {
			metaGot := fwdMembers(t, got[i].value)
			if len(metaGot) != len(metaWant) {
				t.Fatalf("legacy %v: splice of %q has _meta %q", legacy, raw, got[i].value)
			}
			for k := range metaWant {
				if metaGot[k].name != metaWant[k].name || !bytes.Equal(metaGot[k].value, metaWant[k].value) {
					t.Fatalf("legacy %v: splice of %q has _meta %q", legacy, raw, got[i].value)
				}
			}
			continue
		}
		if !bytes.Equal(got[i].value, want[i].value) {
			t.Fatalf("legacy %v: splice of %q: %s is %q, want %q as written", legacy, raw, want[i].name, got[i].value, want[i].value)
		}
	}
}
