package main

import "testing"

// TestPolicyNullKeys: an allow or rateLimit key written without a value
// is an error at its line, never "no rule": a rule left empty would allow
// every caller the operator meant to restrict.
func TestPolicyNullKeys(t *testing.T) {
	t.Parallel()
	const head = "upstreams:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n"
	const rule = "want a CEL expression, got null (a rule left empty would allow every caller)"
	const limit = "want a mapping, got null: write rateLimit: {calls: N, per: DURATION}"
	for _, tc := range []struct{ file, want string }{
		{head + "    allow:\n    prefix: a_\n", `-upstreams u.yaml:4: upstreams[0].allow: ` + rule},
		{head + "    allow: ~\n", `-upstreams u.yaml:4: upstreams[0].allow: ` + rule},
		{head + "    allow: null\n", `-upstreams u.yaml:4: upstreams[0].allow: ` + rule},
		{head + "    rateLimit:\n", `-upstreams u.yaml:4: upstreams[0].rateLimit: ` + limit},
		{head + "    overrides:\n      x.y:\n        name: z\n        allow:\n", `-upstreams u.yaml:7: upstreams[0].overrides.'x.y'.allow: ` + rule},
		{head + "    overrides:\n      x:\n        name: z\n        rateLimit: ~\n", `-upstreams u.yaml:7: upstreams[0].overrides.x.rateLimit: ` + limit},
		{head + "servers:\n  - path: /v\n    allow:\n", `-upstreams u.yaml:6: servers[0].allow: ` + rule},
		{head + "servers:\n  - path: /v\n    rateLimit: null\n", `-upstreams u.yaml:6: servers[0].rateLimit: ` + limit},
	} {
		if _, err := parseUpstreams("u.yaml", []byte(tc.file), false); err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}
