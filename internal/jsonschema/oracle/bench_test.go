package oracle

import (
	"testing"

	"github.com/wymcp/wymcp/internal/jsonschema"
	"github.com/wymcp/wymcp/internal/strictjson"
)

// benchSchema is a typical tool input schema with a few of each kind of
// keyword; benchArgs is valid under it.
const (
	benchSchema = `{"type":"object","properties":{
		"name":{"type":"string","minLength":1,"maxLength":64},
		"count":{"type":"integer","minimum":0,"maximum":1000},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"uniqueItems":true},
		"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city"]}
	},"required":["name","count"],"additionalProperties":false}`
	benchArgs    = `{"name":"ada","count":7,"tags":["a","c"],"address":{"city":"Paris","zip":"75001"}}`
	benchInvalid = `{"name":"","count":7000,"tags":["a","a","z"],"address":{"zip":"x"},"extra":1}`
)

// BenchmarkValidate compares wymcp's validator with the reference on the
// same decoded instance, side by side: valid and invalid arguments.
func BenchmarkValidate(b *testing.B) {
	own, err := jsonschema.Compile([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	ref, err := reference([]byte(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct{ name, args string }{{"valid", benchArgs}, {"invalid", benchInvalid}} {
		var v any
		if err := strictjson.Unmarshal([]byte(in.args), &v); err != nil {
			b.Fatal(err)
		}
		b.Run(in.name+"/wymcp", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				own.Validate(v)
			}
		})
		b.Run(in.name+"/santhosh", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ref.Validate(v)
			}
		})
	}
}
