package strictjson

// Member returns the value of the member name of the object v, as its bytes
// in v, and false when v is not an object or has no such member. Names are
// compared by meaning ("\u0073ampling" is "sampling"). It walks the object
// with a Lexer on the stack and decodes nothing, so it allocates nothing:
// the server asks it of each request's clientCapabilities, and of a retry's
// inputResponses for each answer a tool looks up.
func Member(v []byte, name string) ([]byte, bool) {
	var l Lexer
	l.Reset(v)
	defer l.Close()
	var o Object
	if l.OpenObject(&o, nil) != nil {
		return nil, false
	}
	for {
		member, ok, err := l.Member(&o)
		if !ok || err != nil {
			return nil, false
		}
		if string(member) == name {
			start, end, err := l.Value()
			if err != nil {
				return nil, false
			}
			return v[start:end:end], true
		}
		if l.Skip() != nil {
			return nil, false
		}
	}
}
