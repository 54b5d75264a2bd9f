package upstream

import (
	"strings"
	"testing"
)

func TestServedNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	cases := []struct {
		prefix string
		names  []string
		want   []string
	}{
		{"", []string{"echo", "add"}, []string{"echo", "add"}},
		{"gh_", []string{"create_issue"}, []string{"gh_create_issue"}},
		// Characters outside the alphabet become '_'.
		{"a/", []string{"get weather", "naïve"}, []string{"a_get_weather", "a_na_ve"}},
		// Two names that read the same once sanitized both get hashes.
		{"", []string{"a b", "a_b", "c"}, []string{"a_b-522207d2", "a_b-c0a7a058", "c"}},
		// Too long: 55 bytes, "-", 8 hex digits of SHA-256("p_\x00" + name)
		// (python3 -c "import hashlib; print(hashlib.sha256(...).hexdigest()[:8])").
		{"p_", []string{long}, []string{"p_" + strings.Repeat("x", 53) + "-5cc3666e"}},
	}
	for _, c := range cases {
		got := servedNames(c.prefix, c.names)
		for i := range got {
			if len(got[i]) > maxName {
				t.Errorf("%q: %d bytes", got[i], len(got[i]))
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("servedNames(%q, %q) = %q, want %q", c.prefix, c.names, got, c.want)
		}
		// Deterministic: the same input, the same names.
		if again := servedNames(c.prefix, c.names); strings.Join(again, ",") != strings.Join(got, ",") {
			t.Errorf("not deterministic: %q then %q", got, again)
		}
	}
}

func TestServedNamesUnique(t *testing.T) {
	// Many names that collide once cut to 55 bytes stay distinct.
	var names []string
	for i := 0; i < 200; i++ {
		names = append(names, strings.Repeat("y", 60)+string(rune('a'+i%26))+strings.Repeat("z", i/26))
	}
	seen := map[string]bool{}
	for _, n := range servedNames("pre_", names) {
		if seen[n] || len(n) > maxName || sanitize(n) != n {
			t.Fatalf("bad or repeated name %q", n)
		}
		seen[n] = true
	}
}

func TestAdmitted(t *testing.T) {
	for _, c := range []struct {
		name             string
		include, exclude []string
		want             bool
	}{
		{"echo", nil, nil, true},
		{"echo", []string{"e*"}, nil, true},
		{"add", []string{"e*"}, nil, false},
		{"echo", nil, []string{"echo"}, false},
		{"echo_admin", []string{"echo*"}, []string{"*_admin"}, false},
	} {
		if got := admitted(c.name, c.include, c.exclude); got != c.want {
			t.Errorf("admitted(%q, %q, %q) = %v", c.name, c.include, c.exclude, got)
		}
	}
}
