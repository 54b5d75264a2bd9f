package strictjson

import "testing"

// TestMember: a member is found by meaning, as its bytes (capacity capped),
// at any place in the object; anything else is not found; looking
// allocates nothing (the pooled Lexer is reused).
func TestMember(t *testing.T) {
	obj := []byte(`{"a":1,"\u0062":{"x":[1,2]}, "c" : "s" ,"d":null}`)
	for name, want := range map[string]string{"a": "1", "b": `{"x":[1,2]}`, "c": `"s"`, "d": "null"} {
		got, ok := Member(obj, name)
		if !ok || string(got) != want || cap(got) != len(got) {
			t.Errorf("%s: %q %v, want %q", name, got, ok, want)
		}
	}
	for _, v := range []string{`{"a":1}`, `{}`, `[]`, `"b"`, ``, `{"a":`} {
		if got, ok := Member([]byte(v), "b"); ok {
			t.Errorf("%s: found %q", v, got)
		}
	}
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(100, func() { Member(obj, "d") }); n != 0 {
		t.Errorf("Member: %v allocations", n)
	}
}
