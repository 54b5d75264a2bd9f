package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-json/jsontext"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// slots are the places FuzzLexerDifferential puts its input: each is a valid
// envelope around %s, so that the input is read by each of the scanner's
// walks (top level, params, _meta, clientInfo, skipped members) and at a
// depth other than 0.
var slots = []string{
	`%s`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":%s}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","inputResponses":%s,"requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":%s}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":%s}}}`,
	`{"jsonrpc":"2.0","unknown":[%s],"id":1,"method":"m"}`,
	`{"id":%s}`,
}

// FuzzLexerDifferential is the one differential target of the strict
// lexer (internal/strictjson), the judge of valid JSON in wymcp. It holds
// the lexer to two independent strict readers on every input, as is and in
// each slot:
//
//   - validity: strictjson.Valid and scan accept exactly what jsontext's
//     Value.IsValid accepts (scan: when it is an object), and scanParams
//     exactly what the jsontext-driven oracle accepts;
//   - extraction: what scan finds (every member of fields) is what the
//     oracle finds, byte for byte, and what encoding/json finds decoding the
//     same levels into maps of raw values;
//   - the caller-driven walk (checkWalk): reading the input token by token
//     with OpenObject, Member, OpenArray, Element, String, Number and Skip —
//     as the tools fast path does — accepts exactly what jsontext accepts
//     and sees the same tokens: each name unescaped as jsontext unquotes it
//     (found among the object's Names or not), each string's bytes, escapes
//     and length in characters, each number's text. The input is also
//     walked as the name of a member, so that every string the fuzzer makes
//     is unescaped and compared.
func FuzzLexerDifferential(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `[1,"x",true,false,null,{},[]]`, `{"a":{"b":[1,{"c":"d"}]},"e":-0.5e+3}`,
		`{"name":"n","version":"v","x":{}}`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7}`,
		`{"\u0061":1,"a":2}`, `{"\ud83d\ude00":1,"😀":2}`, `"\ud800\udc00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`,
		"\"\xed\xa0\x80\"", "\"\xc0\x80\"", "\"\xf4\x90\x80\x80\"", "\"a\x00\"", `"\u0000"`, "\xef\xbb\xbf{}",
		`01`, `-`, `1.`, `.5`, `+1`, `1e`, `1E+`, `-0.0e-0`, `tru`, `nulll`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `[1}`,
		` { "a" : [ 1 , 2 ] } `, "\t\r\n1\f", `{"params":{"name":"a","name":"b"}}`,
		strings.Repeat("[", 40) + strings.Repeat("]", 40), strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40),
		wideObject(40, 39), wideObject(40, 3), wideObject(40, -1), `{"a\\b":1,"a\u005cb":2}`, `"\/\b\f\n\r\t\"\\"`,
		// Once FuzzUnescape's seeds, when strictjson had its own target.
		`"a"`, `"\u00e9\n"`, `"\ud83d\ude00"`,
		// Names the walk's Names hold, repeated, escaped, long.
		`{"id":1,"i\u0064":2}`, `{"name":1,"abcdefghij":2,"abcdefghik":3,"abcdefghij":4}`, `{"é":[],"\u00e9":{}}`,
		`{"":0,"\u0000":1,"":2}`, `[{"a":1,"b":2},{"a":3,"a":4}]`,
		// Long strings with escapes: lengths past a word, names past a Names head.
		`["` + strings.Repeat(`a\u00e9\n\ud83d\ude00`, 12) + `"]`, `{"` + strings.Repeat(`\u0061bc`, 9) + `":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := jsontext.Value(data).IsValid()
		if got := strictjson.Valid(data); got != valid {
			t.Fatalf("Valid %v, jsontext %v: %q", got, valid, data)
		}
		for _, slot := range slots {
			body := []byte(fmt.Sprintf(slot, data))
			checkScan(t, body)
		}
		checkScanParams(t, data)
		checkWalk(t, data)
		checkWalk(t, []byte("{"+string(data)+":0}"))
	})
}

// reused is the scanner checkScan scans every body with, as the HTTP edge
// scans every body of a pooled request buffer with one: what one body
// leaves in it must not change how the next is read. (The fuzz function
// runs one input at a time in each process.)
var reused scanner

// checkScan compares scan with IsValid, the oracle and encoding/json on body.
func checkScan(t *testing.T, body []byte) {
	t.Helper()
	var got fields
	var want oracleFields
	err := scan(&reused, body, &got)
	object := bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
	valid := jsontext.Value(body).IsValid()
	if (err == nil) != (valid && object) {
		t.Fatalf("scan %v, jsontext valid %v (object %v): %q", err, valid, object, body)
	}
	if start := valueStart(body); start < 0 || body[start] != '{' {
		// Parse does not scan such a body; the oracle, given one that
		// opens with an array, would read its elements as names.
		return
	}
	if oerr := oracleScan(body, &want); (err == nil) != (oerr == nil) {
		t.Fatalf("scan %v, oracle %v: %q", err, oerr, body)
	}
	if err != nil {
		return
	}
	if d := diffFields(expand(&got), &want); d != "" {
		t.Fatalf("scan and oracle differ on %s: %q", d, body)
	}
	if d := diffReference(expand(&got), body); d != "" {
		t.Fatalf("scan and encoding/json differ on %s: %q", d, body)
	}
}

// checkScanParams compares scanParams with the oracle's on params alone.
func checkScanParams(t *testing.T, params []byte) {
	t.Helper()
	var got fields
	var want oracleFields
	err, oerr := scanParams(params, &got), oracleScanParams(params, &want)
	if (err == nil) != (oerr == nil) {
		t.Fatalf("scanParams %v, oracle %v: %q", err, oerr, params)
	}
	if err == nil {
		if d := diffFields(expand(&got), &want); d != "" {
			t.Fatalf("scanParams and oracle differ on %s: %q", d, params)
		}
	}
}

// named lists the members of f with their names, for comparison.
func named(f *oracleFields) []struct {
	name string
	v    RawJSON
} {
	return []struct {
		name string
		v    RawJSON
	}{
		{"jsonrpc", f.jsonrpc}, {"id", f.id}, {"method", f.method}, {"params", f.params},
		{"result", f.result}, {"error", f.error}, {"_meta", f.meta}, {"name", f.name},
		{"uri", f.uri}, {"arguments", f.arguments}, {"cursor", f.cursor}, {"protocolVersion", f.legacyVersion},
		{"inputResponses", f.inputResponses}, {"requestState", f.requestState},
		{MetaProtocolVersion, f.m.ProtocolVersion}, {MetaClientCapabilities, f.m.ClientCapabilities},
		{MetaClientInfo, f.m.ClientInfo}, {MetaLogLevel, f.m.LogLevel}, {"progressToken", f.m.ProgressToken},
		{"traceparent", f.m.Traceparent}, {"tracestate", f.m.Tracestate}, {"baggage", f.m.Baggage},
		{"clientInfo.name", f.clientInfo.Name}, {"clientInfo.version", f.clientInfo.Version},
	}
}

// diffFields names the first member where a and b differ, "" if none. A
// member whose capacity runs past its end differs too: an append to it
// would write over the body.
func diffFields(a, b *oracleFields) string {
	if a.paramsObject != b.paramsObject || a.metaObject != b.metaObject || a.clientInfoObject != b.clientInfoObject {
		return fmt.Sprintf("shape (%v %v %v vs %v %v %v)", a.paramsObject, a.metaObject, a.clientInfoObject,
			b.paramsObject, b.metaObject, b.clientInfoObject)
	}
	na, nb := named(a), named(b)
	for i := range na {
		if (na[i].v == nil) != (nb[i].v == nil) || !bytes.Equal(na[i].v, nb[i].v) {
			return fmt.Sprintf("%s (%q vs %q)", na[i].name, na[i].v, nb[i].v)
		}
		if cap(na[i].v) != len(na[i].v) || cap(nb[i].v) != len(nb[i].v) {
			return fmt.Sprintf("%s capacity (%d, %d past the end)", na[i].name,
				cap(na[i].v)-len(na[i].v), cap(nb[i].v)-len(nb[i].v))
		}
	}
	return ""
}

// diffReference checks f against encoding/json's reading of body, level by
// level: each member f keeps is the raw value encoding/json finds under the
// same name (absent as absent), and each level f calls an object is one.
func diffReference(f *oracleFields, body []byte) string {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return "top: " + err.Error()
	}
	if d := compare(top, map[string]RawJSON{"jsonrpc": f.jsonrpc, "id": f.id, "method": f.method,
		"params": f.params, "result": f.result, "error": f.error}); d != "" {
		return d
	}
	params, d := level(top["params"], f.paramsObject)
	if d != "" || params == nil {
		return d
	}
	if d := compare(params, map[string]RawJSON{"_meta": f.meta, "name": f.name, "uri": f.uri,
		"arguments": f.arguments, "cursor": f.cursor, "protocolVersion": f.legacyVersion,
		"inputResponses": f.inputResponses, "requestState": f.requestState}); d != "" {
		return d
	}
	meta, d := level(params["_meta"], f.metaObject)
	if d != "" || meta == nil {
		return d
	}
	if d := compare(meta, map[string]RawJSON{MetaProtocolVersion: f.m.ProtocolVersion,
		MetaClientCapabilities: f.m.ClientCapabilities, MetaClientInfo: f.m.ClientInfo, MetaLogLevel: f.m.LogLevel,
		"progressToken": f.m.ProgressToken, "traceparent": f.m.Traceparent, "tracestate": f.m.Tracestate,
		"baggage": f.m.Baggage}); d != "" {
		return d
	}
	info, d := level(meta[MetaClientInfo], f.clientInfoObject)
	if d != "" || info == nil {
		return d
	}
	return compare(info, map[string]RawJSON{"name": f.clientInfo.Name, "version": f.clientInfo.Version})
}

// level decodes v when it is an object, and checks that scan said so.
func level(v json.RawMessage, object bool) (map[string]json.RawMessage, string) {
	if (len(v) > 0 && v[0] == '{') != object {
		return nil, fmt.Sprintf("object %v for %q", object, v)
	}
	if !object {
		return nil, ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return nil, err.Error()
	}
	return m, ""
}

// compare checks the kept members against a decoded level.
func compare(ref map[string]json.RawMessage, kept map[string]RawJSON) string {
	for name, v := range kept {
		r, ok := ref[name]
		if ok != (v != nil) || !bytes.Equal(r, v) {
			return fmt.Sprintf("%s (%q vs encoding/json %q, present %v)", name, v, r, ok)
		}
	}
	return ""
}

// wideObject is an object of n members; when dup >= 0 the last repeats the
// name of member dup, escaped.
func wideObject(n, dup int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if dup >= 0 {
		fmt.Fprintf(&b, `"\u006b%d":0,`, dup)
	}
	b.WriteString(`"end":true}`)
	return b.String()
}
