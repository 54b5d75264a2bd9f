package auth

// The refusals of a token that does not say who it stands for. The server
// binds per-caller state to the caller's subject, or to its client when it
// has none (wymcp.Principal.Subject): a token that names neither, or names
// one with a value that is not a string, would bind as nobody, and every
// such token alike (docs/design.md §6).
var (
	errBadSubject = invalid("the token's subject (sub) is not a non-empty string", nil)
	errBadClient  = invalid("the token's client (client_id, azp) is not a non-empty string", nil)
	errNoIdentity = invalid("the token names no subject or client (sub, client_id, azp)", nil)
)

// identify reads who a token stands for from its claims (a JWT's payload,
// an introspection answer): the subject, sub, and the client, client_id
// else azp. A sub that is there must be a non-empty string. A token with
// no sub (a client-credentials token) is its client's, whose claim must
// then be a non-empty string; with a sub, a client claim of another type
// is ignored. A token with neither is refused. A member that is JSON null
// counts as absent.
func identify(claims map[string]any) (sub, client string, err error) {
	sub, ok := stringClaim(claims, "sub")
	if !ok {
		return "", "", errBadSubject
	}
	client, clientOK := stringClaim(claims, "client_id")
	if clientOK && client == "" {
		client, clientOK = stringClaim(claims, "azp")
	}
	switch {
	case sub != "":
		if !clientOK {
			client = ""
		}
		return sub, client, nil
	case !clientOK:
		return "", "", errBadClient
	case client == "":
		return "", "", errNoIdentity
	}
	return "", client, nil
}

// stringClaim returns the claim name: ("", true) when it is absent or
// null, (v, true) for a non-empty string v, and ("", false) for anything
// else (the empty string, a number, an object, …).
func stringClaim(claims map[string]any, name string) (string, bool) {
	v, ok := claims[name]
	if !ok || v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok && s != ""
}
