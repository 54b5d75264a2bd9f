package wire

// The resultType of a 2026-07-28 result, which every result carries.
const (
	// ResultTypeComplete marks every ordinary result.
	ResultTypeComplete = "complete"
	// ResultTypeInputRequired marks an InputRequiredResult: the server needs
	// the client's input before it can complete the request (SEP-2322).
	ResultTypeInputRequired = "input_required"
)

// Cache scopes of SEP-2549.
const (
	// CacheScopePublic: the result holds nothing specific to the caller.
	CacheScopePublic = "public"
	// CacheScopePrivate: reuse only within the same authorization context.
	CacheScopePrivate = "private"
)

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	ResultType        string   `json:"resultType"`
	SupportedVersions []string `json:"supportedVersions"`
	Capabilities      RawJSON  `json:"capabilities"`
	Instructions      string   `json:"instructions,omitempty"`
	TTLMs             int64    `json:"ttlMs"`
	CacheScope        string   `json:"cacheScope"`
	Meta              RawJSON  `json:"_meta"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	ResultType string  `json:"resultType"`
	Tools      []Tool  `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
	TTLMs      int64   `json:"ttlMs"`
	CacheScope string  `json:"cacheScope"`
	Meta       RawJSON `json:"_meta"`
}
