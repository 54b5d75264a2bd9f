package wire

// Version is the only protocol revision wymcp serves: the stateless
// revision of SEP-2575. Legacy (2025) clients are answered, not served.
const Version = "2026-07-28"

// supported lists the revisions server/discover advertises and -32022
// names in data.supported: modern revisions only (MCP 2026-07-28, server/discover). An array,
// so that what it holds is fixed at compile time.
var supported = [...]string{Version}

// SupportedVersions returns the supported revisions: a new slice each time,
// so that no caller can change what another reads.
func SupportedVersions() []string { return append([]string(nil), supported[:]...) }

// IsSupportedVersion reports whether v is a supported revision.
func IsSupportedVersion(v string) bool {
	for _, s := range supported {
		if v == s {
			return true
		}
	}
	return false
}

// unsupportedVersionData is the data member of a -32022 error: both members
// are required by the schema, so requested is "" when the client named none.
type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// UnsupportedVersion returns the -32022 error for a requested revision.
func UnsupportedVersion(requested string) *Error {
	return NewError(CodeUnsupportedProtocolVersion).WithData(unsupportedVersionData{
		Supported: SupportedVersions(),
		Requested: requested,
	})
}
