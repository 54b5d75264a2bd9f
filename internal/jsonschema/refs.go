package jsonschema

import "strings"

// reference compiles the target of "$ref" or "$dynamicRef"; nil when absent.
// The reference resolves against the schema's base URI and must land in
// this document: in a resource it holds (the root, or a subschema with
// "$id"), at a JSON pointer or an anchor. Anything else would need a fetch,
// and wymcp never fetches a schema (docs/design.md §6).
func (k *keywords) reference(kw string) *node {
	ref, ok := k.obj[kw].(string)
	if !ok || k.err != nil {
		return nil
	}
	loc, ok := k.target(kw, ref)
	if !ok {
		return nil
	}
	n, err := k.c.compile(loc)
	if err != nil {
		k.err = err
	}
	return n
}

// target finds the location a reference names.
func (k *keywords) target(kw, ref string) (string, bool) {
	u, err := resolve(k.c.baseOf(k.loc), ref)
	if err != nil {
		k.fail(kw, "%v", err)
		return "", false
	}
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	res, ok := k.c.resources[u.String()]
	if !ok {
		k.fail(kw, "%q is outside this document; wymcp never loads a schema from anywhere (docs/design.md §6)", ref)
		return "", false
	}
	switch {
	case frag == "":
		return res.loc, true
	case strings.HasPrefix(frag, "/"):
		loc := res.loc + frag
		if _, ok := k.c.lookup(loc); !ok {
			k.fail(kw, "%q: the document has nothing at that JSON pointer", ref)
			return "", false
		}
		return loc, true
	}
	loc, ok := k.c.anchors[res.uri+"#"+frag]
	if !ok {
		k.fail(kw, "%q: no anchor %q in that resource", ref, frag)
		return "", false
	}
	return loc, true
}

// dynamicName returns the anchor name that makes a "$dynamicRef" dynamic:
// its fragment, when the schema it first resolves to has a "$dynamicAnchor"
// of that name. Otherwise "" and the reference behaves like "$ref".
func (k *keywords) dynamicName() string {
	ref := k.obj["$dynamicRef"].(string)
	u, err := resolve(k.c.baseOf(k.loc), ref)
	if err != nil || u.Fragment == "" || strings.HasPrefix(u.Fragment, "/") {
		return ""
	}
	frag := u.Fragment
	u.Fragment, u.RawFragment = "", ""
	res := k.c.resources[u.String()]
	if res == nil {
		return ""
	}
	loc, ok := k.c.anchors[res.uri+"#"+frag]
	if ok && res.dynamicLocs[frag] == loc {
		return frag
	}
	return ""
}
