package strictjson

import "github.com/goccy/go-json/jsontext"

// Canonical returns v in one canonical form, so that two encodings of the
// same value — members in another order, other white space, other string
// escapes, 1.0 for 1 — come out as the same bytes: the JSON Canonicalization
// Scheme of RFC 8785, except that integers keep their exact digits (JCS
// would round those past 2⁵³ to a double and so make two different
// integers one). It is for binding something to a value's meaning, as the
// multi-round-trip state binds itself to a call's arguments. v must be one
// valid JSON value; the result is a new slice.
func Canonical(v []byte) ([]byte, error) {
	c := jsontext.Value(append([]byte(nil), v...))
	if err := c.Canonicalize(jsontext.CanonicalizeRawInts(false)); err != nil {
		return nil, err
	}
	return c, nil
}
