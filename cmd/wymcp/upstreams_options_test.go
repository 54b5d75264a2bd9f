package main

import (
	"reflect"
	"testing"

	"github.com/wymcp/wymcp/upstream"
)

// TestUpstreamEntryReachesOptions: every key of an upstream entry reaches
// upstream.Options. options() copies a field to the option of its name,
// and skips one it cannot (another name, a type that does not convert):
// a key added under another name would be read and then silently
// ignored; this test names it instead.
func TestUpstreamEntryReachesOptions(t *testing.T) {
	t.Parallel()
	byHand := map[string]bool{"Breaker": true, "Retries": true, "Credentials": true, "Overrides": true, "Guard": true, "Sessions": true}
	entry, opts := reflect.TypeFor[upstreamEntry](), reflect.TypeFor[upstream.Options]()
	for f := range entry.Fields() {
		if !f.IsExported() || byHand[f.Name] {
			continue
		}
		o, ok := opts.FieldByName(f.Name)
		if !ok || !f.Type.ConvertibleTo(o.Type) {
			t.Errorf("upstreamEntry.%s (key %q) reaches no upstream.Options field: name it as the option, or set it by hand in options() and list it here", f.Name, f.Tag.Get("yaml"))
		}
	}
}
