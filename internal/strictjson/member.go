package strictjson

// Member returns the value of the member name of the object v, as its bytes
// in v, and false when v is not an object or has no such member. Names are
// compared by meaning ("\u0073ampling" is "sampling"). It walks the object
// with a pooled Lexer and decodes nothing, so it allocates nothing: the
// server asks it of each request's clientCapabilities, and of a retry's
// inputResponses for each answer a tool looks up.
func Member(v []byte, name string) ([]byte, bool) {
	var raw []byte
	found := false
	_ = With(v, func(l *Lexer) error {
		if err := l.OpenObject(); err != nil {
			return err
		}
		for {
			member, ok, err := l.Member()
			if !ok {
				return err
			}
			if string(member) == name {
				start, end, err := l.Value()
				if err == nil {
					raw, found = v[start:end:end], true
				}
				return err
			}
			if err := l.Skip(); err != nil {
				return err
			}
		}
	})
	return raw, found
}
