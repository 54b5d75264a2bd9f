package wire

import (
	"fmt"
	"slices"
)

// Version is the stateless revision of SEP-2575, which every server serves:
// its requests carry their revision in `_meta` and the MCP-Protocol-Version
// header.
const Version = "2026-07-28"

// The 2025 revisions a server may also serve when its operator lists them
// (docs/design.md §1a): their clients open with initialize and then name
// their revision in the MCP-Protocol-Version header alone.
const (
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
)

// known lists every revision wymcp can serve, newest first: the order in
// which a server lists what it serves.
var known = [...]string{Version, Version20251125, Version20250618}

// isKnown reports whether v is a revision wymcp can serve.
func isKnown(v string) bool { return slices.Contains(known[:], v) }

// Versions is what one server serves: 2026-07-28, and the 2025 revisions
// its operator listed. The zero value (and nil) serves 2026-07-28 alone, the
// default, whose answers list that revision only.
type Versions struct {
	// legacy are the 2025 revisions served, newest first.
	legacy []string
}

// NewVersions returns the Versions of the revisions vs: each a revision
// wymcp knows, none twice, 2026-07-28 among them (it is the server's own
// revision; the 2025 ones are served beside it).
func NewVersions(vs []string) (*Versions, error) {
	if len(vs) == 0 {
		return &Versions{}, nil
	}
	if !slices.Contains(vs, Version) {
		return nil, fmt.Errorf("the versions served must include %s (got %q)", Version, vs)
	}
	for i, v := range vs {
		if !isKnown(v) {
			return nil, fmt.Errorf("unknown protocol revision %q (known: %q)", v, known)
		}
		if slices.Contains(vs[:i], v) {
			return nil, fmt.Errorf("protocol revision %q listed twice", v)
		}
	}
	out := &Versions{}
	for _, k := range known[1:] {
		if slices.Contains(vs, k) {
			out.legacy = append(out.legacy, k)
		}
	}
	return out, nil
}

// List returns the revisions served, newest first: what server/discover
// advertises and -32022 names. It is a new slice each time.
func (v *Versions) List() []string {
	out := []string{Version}
	if v != nil {
		out = append(out, v.legacy...)
	}
	return out
}

// ServesLegacy reports whether any 2025 revision is served.
func (v *Versions) ServesLegacy() bool { return v != nil && len(v.legacy) > 0 }

// IsLegacy reports whether s is a 2025 revision this server serves.
func (v *Versions) IsLegacy(s string) bool { return v != nil && slices.Contains(v.legacy, s) }

// Negotiate is the revision an initialize that asked for requested gets:
// that revision when served, else the newest 2025 revision served (the
// client then decides whether it can speak it). ServesLegacy must hold.
func (v *Versions) Negotiate(requested string) string {
	if v.IsLegacy(requested) {
		return requested
	}
	return v.legacy[0]
}

// unsupportedVersionData is the data member of a -32022 error: both members
// are required by the schema, so requested is "" when the client named none.
type unsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// Unsupported returns the -32022 error for a requested revision, naming
// every revision served.
func (v *Versions) Unsupported(requested string) *Error {
	return NewError(CodeUnsupportedProtocolVersion).WithData(unsupportedVersionData{
		Supported: v.List(),
		Requested: requested,
	})
}
