package wire

// ID is a JSON-RPC request id, kept as its JSON text so it is echoed exactly
// as sent. The zero ID means "no id" (a notification, or an id that could
// not be read) and is written as null.
type ID struct{ raw string }

// maxIDLen bounds an id's JSON text, in bytes: a string id of at most
// maxIDLen-2 bytes between its quotes, or any integer id. An id is a
// correlation token; a longer one is refused with its own message
// (docs/design.md §5) rather than echoed into every log line and span.
const maxIDLen = 1024

// parseID checks an id member. Absent is the zero ID (a notification). A
// JSON string, or an integer that fits in an int64 (no fraction, no
// exponent: the 2026-07-28 schema types ids string|integer), is accepted.
// Everything else — null, a float, a bool, an object, an array, an integer
// out of range — is refused (errBadID), since it cannot be correlated, and
// so is an id past maxIDLen (errLongID).
func parseID(v RawJSON) (ID, *Error) {
	if v == nil {
		return ID{}, nil
	}
	switch kindOf(v) {
	case '"':
		if len(v) > maxIDLen {
			return ID{}, errLongID
		}
		return ID{raw: string(v)}, nil
	case '0':
		if !isInt64Literal(v) {
			return ID{}, errBadID
		}
		return ID{raw: string(v)}, nil
	}
	return ID{}, errBadID
}

// isInt64Literal reports whether b is a JSON integer literal within int64.
func isInt64Literal(b []byte) bool {
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	limit := uint64(1<<63 - 1)
	if neg {
		limit++
	}
	// 19 digits can reach 9,999,999,999,999,999,999, which overflows no
	// uint64 (max ~1.8e19), so the comparison is exact.
	return n <= limit
}

// NewIntID returns the ID of an integer id.
func NewIntID(n int64) ID {
	b, _ := Marshal(n)
	return ID{raw: string(b)}
}

// IsZero reports whether the id is absent or unreadable.
func (id ID) IsZero() bool { return id.raw == "" }

// JSON returns the id as JSON text: `null` for the zero ID.
func (id ID) JSON() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// String returns the id's string form for telemetry (jsonrpc.request.id):
// a string id without its quotes, an integer in decimal, "" when zero.
func (id ID) String() string {
	if len(id.raw) >= 2 && id.raw[0] == '"' {
		s, _ := unquote(RawJSON(id.raw))
		return s
	}
	return id.raw
}
