package wire

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseUpstreamResult(t *testing.T) {
	for _, c := range []struct {
		in   string
		want UpstreamResult
	}{
		{`{"content":[]}`, UpstreamResult{}},
		{`{"content":[{"type":"text","text":"x"}],"isError":true}`, UpstreamResult{IsError: true}},
		{`{"isError":false,"content":[]}`, UpstreamResult{}},
		{`{"resultType":"complete","content":[],"structuredContent":5,"_meta":{"k":1},"extra":{"a":[1,2]}}`, UpstreamResult{}},
		{` { "content" : [ ] , "isError" : true } `, UpstreamResult{IsError: true}},
		// Names are read by meaning: escaped ones are the same names.
		{`{"\u0063ontent":[],"is\u0045rror":true}`, UpstreamResult{IsError: true}},
		{`{"result\u0054ype":"input_required","request\u0053tate":"s"}`, UpstreamResult{InputRequired: true, State: "s"}},
		// requestState is unquoted.
		{`{"resultType":"input_required","requestState":"a\"b\u00e9\/"}`, UpstreamResult{InputRequired: true, State: `a"bé/`}},
		// inputRequests in the order sent; params as sent, {} when absent.
		{`{"resultType":"input_required","inputRequests":{"b":{"method":"sampling/createMessage","params":{ "x" : 1 }},"a":{"method":"elicitation/create"},"\u0063":{"method":"x/y","params":{}}},"requestState":"st"}`,
			UpstreamResult{InputRequired: true, State: "st", Inputs: []InputRequest{
				{Key: "b", Method: "sampling/createMessage", Params: RawJSON(`{ "x" : 1 }`)},
				{Key: "a", Method: "elicitation/create", Params: RawJSON(`{}`)},
				{Key: "c", Method: "x/y", Params: RawJSON(`{}`)},
			}}},
		{`{"resultType":"input_required","inputRequests":{}}`, UpstreamResult{InputRequired: true}},
		// Members are checked whatever the resultType.
		{`{"resultType":"input_required","requestState":"s","content":[],"isError":true}`, UpstreamResult{InputRequired: true, State: "s", IsError: true}},
	} {
		got, err := ParseUpstreamResult(RawJSON(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
}

func TestParseUpstreamResultRefusals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, "the result is not an object"},
		{`null`, "the result is not an object"},
		{``, "the result is not an object"},
		{`{}`, "a complete result has no content array"},
		{`{"structuredContent":{}}`, "a complete result has no content array"},
		{`{"content":{}}`, "content is not an array"},
		{`{"content":null}`, "content is not an array"},
		{`{"content":[],"isError":1}`, "isError is not a boolean"},
		{`{"content":[],"isError":"true"}`, "isError is not a boolean"},
		{`{"content":[],"isError":null}`, "isError is not a boolean"},
		{`{"resultType":"partial","content":[]}`, `resultType is neither "complete" nor "input_required"`},
		{`{"resultType":1,"content":[]}`, `resultType is neither "complete" nor "input_required"`},
		{`{"resultType":"","content":[]}`, `resultType is neither "complete" nor "input_required"`},
		{`{"resultType":"input_required"}`, "an input_required result has neither inputRequests nor requestState"},
		{`{"resultType":"input_required","inputRequests":[]}`, "inputRequests is not an object"},
		{`{"resultType":"input_required","inputRequests":null}`, "inputRequests is not an object"},
		{`{"resultType":"input_required","inputRequests":{"a":{"params":{}}}}`, `inputRequests["a"] has no string method`},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":1}}}`, `inputRequests["a"] has no string method`},
		{`{"resultType":"input_required","inputRequests":{"a":"elicitation/create"}}`, `inputRequests["a"] has no string method`},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"x","params":[]}}}`, `inputRequests["a"].params is not an object`},
		{`{"resultType":"input_required","requestState":5}`, "requestState is not a string"},
		{`{"resultType":"input_required","requestState":null}`, "requestState is not a string"},
		// Names do not repeat, escaped or not, at any depth.
		{`{"content":[],"content":[]}`, "the result is not valid JSON: "},
		{`{"content":[],"con\u0074ent":[]}`, "the result is not valid JSON: "},
		{`{"content":[],"isError":true,"isError":false}`, "the result is not valid JSON: "},
		{`{"content":[{"type":"text","type":"text"}]}`, `member "content" is not valid JSON: `},
		{`{"content":[],"_meta":{"a":1,"a":1}}`, `member "_meta" is not valid JSON: `},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"x"},"a":{"method":"y"}}}`, `member "inputRequests" is not valid JSON: `},
		{`{"resultType":"input_required","requestState":"s","content":"x"}`, "content is not an array"},
		// One strict JSON value.
		{`{"content":[]} {}`, "the result is not valid JSON: "},
		{`{"content":[],}`, "the result is not valid JSON: "},
		{"{\"content\":[\"\xff\"]}", `member "content" is not valid JSON: `},
		{`{"content":["\ud800"]}`, `member "content" is not valid JSON: `},
	} {
		_, err := ParseUpstreamResult(RawJSON(c.in))
		if err == nil {
			t.Errorf("%s: accepted", c.in)
			continue
		}
		if got := err.Error(); got != c.want && !(strings.HasSuffix(c.want, ": ") && strings.HasPrefix(got, c.want)) {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendForwardedResult(t *testing.T) {
	const (
		info = `{"name":"gw","version":"1"}`
		meta = `"_meta":{"io.modelcontextprotocol/serverInfo":` + info + `}`
	)
	for _, c := range []struct {
		in, want, legacy string
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`,
			`{"resultType":"complete","content":[{"type":"text","text":"hi"}],` + meta + `}`,
			`{"content":[{"type":"text","text":"hi"}]}`},
		// Values as written (white space in them, escapes, numbers), the
		// white space between members dropped, the order kept.
		{` { "isError" : true , "content" : [ 1 , 2.50e+1 ] ,"x":"\u0041\/" } `,
			`{"resultType":"complete","isError":true,"content":[ 1 , 2.50e+1 ],"x":"\u0041\/",` + meta + `}`,
			`{"isError":true,"content":[ 1 , 2.50e+1 ],"x":"\u0041\/"}`},
		// The upstream's resultType goes; its _meta's serverInfo gives way
		// to the gateway's, its other members stay, in order.
		{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"a":1,"b":{"c":[ ]}},"content":[]}`,
			`{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":` + info + `,"a":1,"b":{"c":[ ]}}}`,
			`{"content":[],"_meta":{"a":1,"b":{"c":[ ]}}}`},
		// A _meta with nothing of the upstream's left: the 2025 era's
		// answer has none.
		{`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`,
			`{"resultType":"complete","content":[],` + meta + `}`,
			`{"content":[]}`},
		{`{"content":[],"_meta":{}}`,
			`{"resultType":"complete","content":[],` + meta + `}`,
			`{"content":[]}`},
		// structuredContent that is not an object: kept for 2026-07-28,
		// left out for the 2025 era.
		{`{"content":[],"structuredContent":[1,2]}`,
			`{"resultType":"complete","content":[],"structuredContent":[1,2],` + meta + `}`,
			`{"content":[]}`},
		{`{"structuredContent":null,"content":[]}`,
			`{"resultType":"complete","structuredContent":null,"content":[],` + meta + `}`,
			`{"content":[]}`},
		{`{"content":[],"structuredContent":{"a":[1]}}`,
			`{"resultType":"complete","content":[],"structuredContent":{"a":[1]},` + meta + `}`,
			`{"content":[],"structuredContent":{"a":[1]}}`},
		// Escaped names are read by meaning and written plainly.
		{`{"\u0063ontent":[],"result\u0054ype":"x","\u005fmeta":{"io.modelcontextprotocol\/serverInfo":0,"\u00e9t\u00e9":1},"a\"b":2,"\/":3}`,
			`{"resultType":"complete","content":[],"a\"b":2,"/":3,"_meta":{"io.modelcontextprotocol/serverInfo":` + info + `,"été":1}}`,
			`{"content":[],"a\"b":2,"/":3,"_meta":{"été":1}}`},
		{`{}`,
			`{"resultType":"complete",` + meta + `}`,
			`{}`},
	} {
		for _, legacy := range []bool{false, true} {
			want := c.want
			if legacy {
				want = c.legacy
			}
			got, err := AppendForwardedResult([]byte("dst:"), RawJSON(c.in), RawJSON(info), legacy)
			if err != nil {
				t.Errorf("%s (legacy %v): %v", c.in, legacy, err)
				continue
			}
			if string(got) != "dst:"+want {
				t.Errorf("%s (legacy %v):\n got %s\nwant dst:%s", c.in, legacy, got, want)
			}
		}
	}
}

func TestAppendForwardedResultRefusals(t *testing.T) {
	for _, in := range []string{
		`[]`,
		`"x"`,
		``,
		`{"content":[],"content":[]}`,
		`{"content":[],"\u0063ontent":[]}`,
		`{"content":[],"_meta":{"a":1,"\u0061":2}}`,
		`{"content":[],"_meta":5}`,
		`{"content":[],"_meta":[]}`,
		`{"content":[]} x`,
		`{"content":[],`,
	} {
		for _, legacy := range []bool{false, true} {
			if got, err := AppendForwardedResult(nil, RawJSON(in), RawJSON(`{}`), legacy); err == nil {
				t.Errorf("%s (legacy %v): spliced as %s", in, legacy, got)
			}
		}
	}
}
