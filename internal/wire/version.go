package wire

// Version is the only protocol revision wymcp serves: the stateless
// revision of SEP-2575. Legacy (2025) clients are answered, not served.
const Version = "2026-07-28"

// SupportedVersions lists the revisions server/discover advertises and
// -32022 names in data.supported. Modern revisions only (spec digest §2).
var SupportedVersions = []string{Version}

// IsSupportedVersion reports whether v is in SupportedVersions.
func IsSupportedVersion(v string) bool { return v == Version }

// UnsupportedVersionData is the data member of a -32022 error: both members
// are required by the schema, so requested is "" when the client named none.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// UnsupportedVersion returns the -32022 error for a requested revision.
func UnsupportedVersion(requested string) *Error {
	return NewError(CodeUnsupportedProtocolVersion).WithData(UnsupportedVersionData{
		Supported: SupportedVersions,
		Requested: requested,
	})
}
