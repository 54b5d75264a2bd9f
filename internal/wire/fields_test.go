package wire

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestFieldsLayout: fields stays in the 224-byte size class, and its only
// pointer is body, its first word, so the collector scans one word of it.
func TestFieldsLayout(t *testing.T) {
	t.Parallel()
	if size := unsafe.Sizeof(fields{}); size > 224 {
		t.Errorf("fields is %d bytes, want at most 224", size)
	}
	if size := unsafe.Sizeof(span{}); size != 8 {
		t.Errorf("span is %d bytes, want 8", size)
	}
	typ := reflect.TypeFor[fields]()
	if f := typ.Field(0); f.Name != "body" || f.Offset != 0 {
		t.Errorf("first member %s at %d, want body at 0", f.Name, f.Offset)
	}
	for i := 1; i < typ.NumField(); i++ {
		if f := typ.Field(i); hasPointers(f.Type) {
			t.Errorf("member %s holds a pointer", f.Name)
		}
	}
}

// hasPointers reports whether a value of type typ holds a pointer.
func hasPointers(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return typ.Len() > 0 && hasPointers(typ.Elem())
	case reflect.Struct:
		for i := range typ.NumField() {
			if hasPointers(typ.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// TestSpanAtOffsetZero: scanParams reads params alone, so params starts at
// offset 0 of what it reads, and is still told from an absent value.
func TestSpanAtOffsetZero(t *testing.T) {
	t.Parallel()
	for _, params := range []string{`1`, `{}`, `{"name":"x"}`, `[]`, `null`, ` "s" `} {
		var f fields
		if err := scanParams([]byte(params), &f); err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		want := trimSpace(params)
		if !f.params.present() || string(f.raw(f.params)) != want {
			t.Errorf("%q: params %+v reads %q, want %q", params, f.params, f.raw(f.params), want)
		}
		if f.params.off != 0 && want == params {
			t.Errorf("%q: params starts at %d, want 0", params, f.params.off)
		}
	}
	var f fields
	if f.raw(f.params) != nil || f.params.present() {
		t.Error("the zero span reads as present")
	}
}

// trimSpace trims the four white space bytes of JSON.
func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') {
		s = s[1:]
	}
	for n := len(s); n > 0 && (s[n-1] == ' ' || s[n-1] == '\t' || s[n-1] == '\n' || s[n-1] == '\r'); n = len(s) {
		s = s[:n-1]
	}
	return s
}

// TestInterned: a supported version and a logging level sent as plain
// strings are kept without allocating; escaped, they mean the same.
func TestInterned(t *testing.T) {
	cases := []struct {
		name, v, want string
		ok            bool
		read          func(RawJSON) (string, bool)
	}{
		{"version", `"` + Version + `"`, Version, true, protocolVersion},
		{"escaped version", `"2026\u002d07-28"`, Version, true, protocolVersion},
		{"other version", `"2025-06-18"`, "2025-06-18", true, protocolVersion},
		{"version number", `20260728`, "", false, protocolVersion},
		{"level", `"warning"`, "warning", true, logLevel},
		{"escaped level", `"w\u0061rning"`, "warning", true, logLevel},
		{"unknown level", `"verbose"`, "", false, logLevel},
		{"level number", `3`, "", false, logLevel},
	}
	for _, tc := range cases {
		if got, ok := tc.read(RawJSON(tc.v)); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	version, level := RawJSON(`"`+Version+`"`), RawJSON(`"emergency"`)
	if n := testing.AllocsPerRun(100, func() { protocolVersion(version) }); n != 0 {
		t.Errorf("version: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { logLevel(level) }); n != 0 {
		t.Errorf("level: %v allocations", n)
	}
}

// TestNameBytes: a name without escapes comes back as its bytes; an
// escaped one, a non-string and a malformed value (a Request is a plain
// struct, its Name need not come from the lexer) do not.
func TestNameBytes(t *testing.T) {
	for raw, want := range map[string]string{`"echo"`: "echo", `""`: ""} {
		if got, ok := (&Request{Name: RawJSON(raw)}).NameBytes(); !ok || string(got) != want {
			t.Errorf("NameBytes(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`"e\u0063ho"`, `42`, `"`, `"echo`, ``} {
		if got, ok := (&Request{Name: RawJSON(raw)}).NameBytes(); ok {
			t.Errorf("NameBytes(%s) = %q, true; want false", raw, got)
		}
	}
}

// TestHasCapability: a capability is declared when it is a member of the
// clientCapabilities object (names compared by meaning) whose value is an
// object. (Looking allocates nothing: strictjson's TestMember.)
func TestHasCapability(t *testing.T) {
	cases := []struct {
		caps, name string
		want       bool
	}{
		{`{"sampling":{}}`, "sampling", true},
		{`{"roots":{"listChanged":true},"elicitation":{"form":{}}}`, "elicitation", true},
		{`{"\u0073ampling":{}}`, "sampling", true},
		{`{"sampling":true}`, "sampling", false},
		{`{"sampling":null}`, "sampling", false},
		{`{"experimental":{"sampling":{}}}`, "sampling", false},
		{`{}`, "sampling", false},
		{``, "sampling", false},
		{`[]`, "sampling", false},
	}
	for _, tc := range cases {
		m := RequestMeta{ClientCapabilities: RawJSON(tc.caps)}
		if got := m.HasCapability(tc.name); got != tc.want {
			t.Errorf("%s has %s: %v, want %v", tc.caps, tc.name, got, tc.want)
		}
	}
}
