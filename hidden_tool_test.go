package wymcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wymcp/wymcp"
	"github.com/wymcp/wymcp/internal/mcptest"
	"github.com/wymcp/wymcp/protocol"
	"github.com/wymcp/wymcp/tools"
)

// The names of the hidden-tool tests: a tool that needs "admin", and a name
// of the same length that no tool has, so that the two answers can be
// compared byte for byte (Content-Length included) with the echoed name
// swapped.
const (
	vaultTool   = "vault"
	unknownTool = "vaulz"
)

// vault is a scoped tool with everything a call's later checks read: an
// argument mirrored in the Mcp-Param-Region header, and a client
// capability it requires. A caller that may see it is refused for either
// (-32020, -32021); one that may not must not be.
func vault() *tools.Tool {
	return tools.Must(tools.NewRaw(vaultTool, "Needs admin.",
		[]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`),
		func(context.Context, []byte) (*protocol.CallToolResult, error) {
			return protocol.TextResult("opened"), nil
		},
		tools.WithScopes("admin"), tools.WithRequiredCapabilities("elicitation")))
}

// hiddenServer serves the auth tests' tools and vault, behind the fake
// authenticator (every request needs "mcp"), serving both eras;
// challenge is AuthOptions.ScopeChallenge.
func hiddenServer(t *testing.T, challenge bool, rec *tracetest.SpanRecorder) *mcptest.Endpoint {
	t.Helper()
	opts := &wymcp.Options{
		Versions: allVersions,
		Auth: &wymcp.AuthOptions{
			Authenticator:    wymcp.AuthenticatorFunc(fakeAuthenticator),
			ResourceMetadata: testMetadata,
			RequiredScopes:   []string{"mcp"},
			ScopeChallenge:   challenge,
		},
	}
	if rec != nil {
		opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	}
	return newAuthServer(t, opts, append(authTools(), vault())...)
}

// answer is what a client can observe of one answer: the status, every
// header but Date, and the body.
type answer struct {
	status int
	header http.Header
	body   string
}

func observed(status int, h http.Header, body string) answer {
	h = h.Clone()
	h.Del("Date")
	return answer{status: status, header: h, body: body}
}

// legacyCall is a 2025-era tools/call of name with args.
func legacyCall(name, args string) string {
	return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// hiddenCases are requests naming the hidden tool, each sent in its era
// with a token; send builds the request for a name and returns what the
// client observes.
type hiddenCase struct {
	name  string
	token string
	send  func(t *testing.T, e *mcptest.Endpoint, name, token string) answer
	// The answer to the request naming the unknown tool (and, by
	// default, to the one naming the hidden tool): status, JSON-RPC code
	// and id, message, challenge ("" for none).
	status    int
	code      int
	id        string
	message   string
	challenge string
}

func modern(build func(name string) mcptest.RPC) func(*testing.T, *mcptest.Endpoint, string, string) answer {
	return func(t *testing.T, e *mcptest.Endpoint, name, token string) answer {
		rep := e.Send(t, bearer(build(name), token))
		return observed(rep.Status, rep.Header, string(rep.Raw))
	}
}

func legacy(version string, args string, hdr func(name string) map[string]string) func(*testing.T, *mcptest.Endpoint, string, string) answer {
	return func(t *testing.T, e *mcptest.Endpoint, name, token string) answer {
		h := map[string]string{"Authorization": "Bearer " + token}
		if hdr != nil {
			for k, v := range hdr(name) {
				h[k] = v
			}
		}
		status, header, body := legacyRequest(t, e, version, legacyCall(name, args), h)
		return observed(status, header, body)
	}
}

func hiddenCases() []hiddenCase {
	const md = `resource_metadata="` + testMetadata + `"`
	unknown := "Unknown tool: " + unknownTool
	return []hiddenCase{
		{name: "2026-07-28 call", token: "reader",
			send: modern(func(n string) mcptest.RPC {
				return mcptest.ToolCall(n, `{"region":"eu"}`).With("Mcp-Param-Region", "eu").WithID(7)
			}),
			status: 200, code: -32602, id: "7", message: unknown},
		{name: "2026-07-28 call without the Mcp-Param header the tool declares", token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{"region":"eu"}`) }),
			status: 200, code: -32602, id: "1", message: unknown},
		{name: "2026-07-28 call declaring the capability the tool requires", token: "reader",
			send: modern(func(n string) mcptest.RPC {
				return mcptest.ToolCall(n, `{}`).WithCapabilities(`{"elicitation":{}}`)
			}),
			status: 200, code: -32602, id: "1", message: unknown},
		{name: "2026-07-28 call with arguments that are not an object", token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `5`) }),
			status: 200, code: -32602, id: "1", message: unknown},
		{name: "2026-07-28 retry with a requestState", token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`).Retry(`{}`, "forged") }),
			status: 200, code: -32602, id: "1", message: unknown},
		{name: "2026-07-28 call with a string id", token: "reader",
			send: modern(func(n string) mcptest.RPC {
				r := mcptest.ToolCall(n, `{}`)
				r.Body = strings.Replace(r.Body, `"id":1,`, `"id":"x-1",`, 1)
				return r
			}),
			status: 200, code: -32602, id: `"x-1"`, message: unknown},
		{name: "2026-07-28 Mcp-Name disagreeing with the body", token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`).With("Mcp-Name", "other") }),
			status: 400, code: -32020, id: "1"},
		{name: "2026-07-28 Mcp-Name missing", token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`).With("Mcp-Name", "") }),
			status: 400, code: -32020, id: "1"},
		{name: "2026-07-28 Mcp-Name in Base64", token: "reader",
			send: modern(func(n string) mcptest.RPC {
				return mcptest.ToolCall(n, `{}`).With("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte(n))+"?=")
			}),
			status: 200, code: -32602, id: "1", message: unknown},
		{name: "2026-07-28 without the required scope too", token: "outsider",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`) }),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", ` + md + `, scope="mcp"`},
		{name: "2026-07-28 insufficient_scope from the authenticator", token: "narrow",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`) }),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", error_description="needs extra", ` + md + `, scope="mcp extra"`},
		{name: "2025-11-25 call", token: "reader",
			send:   legacy("2025-11-25", `{"region":"eu"}`, func(n string) map[string]string { return map[string]string{"Mcp-Param-Region": "eu"} }),
			status: 200, code: -32602, id: "3", message: unknown},
		{name: "2025-11-25 call with an Mcp-Param header that disagrees", token: "reader",
			send:   legacy("2025-11-25", `{"region":"eu"}`, func(n string) map[string]string { return map[string]string{"Mcp-Param-Region": "us"} }),
			status: 200, code: -32602, id: "3", message: unknown},
		{name: "2025-11-25 Mcp-Name disagreeing with the body", token: "reader",
			send:   legacy("2025-11-25", `{}`, func(n string) map[string]string { return map[string]string{"Mcp-Name": "other"} }),
			status: 400, code: -32020, id: "3"},
		{name: "2025-06-18 call", token: "reader",
			send:   legacy("2025-06-18", `{}`, nil),
			status: 200, code: -32602, id: "3", message: unknown},
		{name: "2025-06-18 without the required scope too", token: "outsider",
			send:   legacy("2025-06-18", `{}`, nil),
			status: 403, code: -32600, id: "3", challenge: `Bearer error="insufficient_scope", ` + md + `, scope="mcp"`},
	}
}

// expectAnswer asserts one observed answer: status, JSON content type,
// code, id, message (when given), no data, and exactly the challenge
// (none when "").
func expectAnswer(t *testing.T, label string, a answer, tc hiddenCase) {
	t.Helper()
	rep := mcptest.Reply{Status: a.status, Header: a.header, Raw: []byte(a.body)}
	if err := json.Unmarshal([]byte(a.body), &rep.Msg); err != nil {
		t.Fatalf("%s: %v: %s", label, err, a.body)
	}
	rep.ExpectError(t, tc.status, tc.code, tc.id)
	if tc.message != "" && rep.Msg.Error.Message != tc.message {
		t.Errorf("%s: message %q, want %q", label, rep.Msg.Error.Message, tc.message)
	}
	if rep.Msg.Error.Data != nil {
		t.Errorf("%s: data %s, want none", label, rep.Msg.Error.Data)
	}
	got := a.header.Values("WWW-Authenticate")
	if tc.challenge == "" && len(got) != 0 || tc.challenge != "" && (len(got) != 1 || got[0] != tc.challenge) {
		t.Errorf("%s: WWW-Authenticate = %q, want %q", label, got, tc.challenge)
	}
}

// TestHiddenToolAnswersAsUnknown: an authenticated caller without a tool's
// scopes, whose tools/list leaves the tool out, gets for a call of it the
// answer a name no tool has gets, whatever the request (era, headers,
// arguments, capabilities, id): the same status, headers and body but for
// the echoed name. Only the scopes every request needs, which name no
// tool, are answered 403 (docs/design.md §5).
func TestHiddenToolAnswersAsUnknown(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := hiddenServer(t, false, rec)
	for _, tc := range hiddenCases() {
		t.Run(tc.name, func(t *testing.T) {
			unknown := tc.send(t, e, unknownTool, tc.token)
			expectAnswer(t, "unknown tool", unknown, tc)
			hidden := tc.send(t, e, vaultTool, tc.token)
			want := unknown
			want.body = strings.ReplaceAll(unknown.body, unknownTool, vaultTool)
			if hidden.status != want.status || !reflect.DeepEqual(hidden.header, want.header) || hidden.body != want.body {
				t.Errorf("hidden tool:\n%d %v\n%s\nunknown tool (its name swapped):\n%d %v\n%s",
					hidden.status, hidden.header, hidden.body, want.status, want.header, want.body)
			}
		})
	}
	// The span says why: the refusal, and the name as an unknown one.
	e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{}`), "reader")).ExpectError(t, 200, -32602, "1")
	if v, _ := spanAttr(rec, "wymcp.auth.refusal"); v != "insufficient_scope" {
		t.Errorf("wymcp.auth.refusal = %q, want insufficient_scope", v)
	}
	// A caller that may see the tool is held to its checks: the rows
	// above would tell a visible tool from an unknown one.
	e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{"region":"eu"}`), "admin")).ExpectError(t, 400, -32020, "1")
	e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{}`), "admin")).ExpectError(t, 400, -32021, "1")
	res := e.Send(t, bearer(mcptest.ToolCall(vaultTool, `{}`).WithCapabilities(`{"elicitation":{}}`), "admin")).ExpectResult(t, "1")
	if text, isErr := mcptest.ToolText(t, res); text != "opened" || isErr {
		t.Errorf("admin's call: %q isError %v", text, isErr)
	}
}

// TestScopeChallenge: with AuthOptions.ScopeChallenge the call of a tool
// whose scopes the caller lacks is answered RFC 6750's 403, naming every
// scope the call needs, so that the client can ask for them (step-up);
// a name no tool has is still -32602. The trade-off is this difference.
func TestScopeChallenge(t *testing.T) {
	t.Parallel()
	const md = `resource_metadata="` + testMetadata + `"`
	e := hiddenServer(t, true, nil)
	forbidden := func(scopes string) string {
		return `Bearer error="insufficient_scope", ` + md + `, scope="` + scopes + `"`
	}
	cases := []struct {
		name string
		hiddenCase
	}{
		{"tool scope missing", hiddenCase{token: "reader",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`).WithID(9) }),
			status: 403, code: -32600, id: "9", challenge: forbidden("mcp admin")}},
		{"tool and required scopes missing", hiddenCase{token: "outsider",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`) }),
			status: 403, code: -32600, id: "1", challenge: forbidden("mcp admin")}},
		{"insufficient_scope from the authenticator", hiddenCase{token: "narrow",
			send:   modern(func(n string) mcptest.RPC { return mcptest.ToolCall(n, `{}`) }),
			status: 403, code: -32600, id: "1", challenge: `Bearer error="insufficient_scope", error_description="needs extra", ` + md + `, scope="mcp admin extra"`}},
		{"2025-11-25 tool scope missing", hiddenCase{token: "reader",
			send:   legacy("2025-11-25", `{}`, nil),
			status: 403, code: -32600, id: "3", challenge: forbidden("mcp admin")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expectAnswer(t, "hidden tool", tc.send(t, e, vaultTool, tc.token), tc.hiddenCase)
		})
	}
	e.Send(t, bearer(mcptest.ToolCall(unknownTool, `{}`), "reader")).ExpectError(t, 200, -32602, "1")
	e.Send(t, bearer(mcptest.ToolCall(unknownTool, `{}`), "outsider")).ExpectError(t, 403, -32600, "1")
}
