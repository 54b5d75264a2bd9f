package wire

import (
	"bytes"
	"testing"

	"github.com/goccy/go-json/jsontext"
)

// quoteAgrees fails t unless appendQuote and jsontext.AppendQuote give the
// same bytes and the same refusal for s, appended after a prefix.
func quoteAgrees(t *testing.T, s string) {
	t.Helper()
	prefix := []byte(`{"text":`)
	got, gotErr := appendQuote(bytes.Clone(prefix), s)
	want, wantErr := jsontext.AppendQuote(bytes.Clone(prefix), s)
	if (gotErr != nil) != (wantErr != nil) || (wantErr == nil && !bytes.Equal(got, want)) {
		t.Fatalf("appendQuote(%q) = %q, %v; jsontext gives %q, %v", s, got, gotErr, want, wantErr)
	}
}

// TestAppendQuote: the plain-ASCII shortcut quotes every string as
// jsontext does, for every byte and every pair of bytes (each escape, each
// byte that starts, continues or breaks UTF-8, next to a plain one), and
// for the strings an answer carries.
func TestAppendQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "hello", "complete", "echo-wymcp", "a\"b", `a\b`, "\x7f", "é", "\u2028", "😀", "\xff", "<&>", "line\nnext"} {
		quoteAgrees(t, s)
	}
	for a := range 256 {
		quoteAgrees(t, string([]byte{byte(a)}))
		for b := range 256 {
			quoteAgrees(t, string([]byte{byte(a), byte(b)}))
		}
	}
}

// FuzzAppendQuote: appendQuote agrees with jsontext.AppendQuote on any
// string.
func FuzzAppendQuote(f *testing.F) {
	for _, s := range []string{"hello", "a\"b\\c", "\x00\x1f\x7f", "é😀\u2028", "\xed\xa0\x80", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(quoteAgrees)
}
