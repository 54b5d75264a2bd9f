package protocol

// Implementation names a client or server (schema `Implementation`). The
// server's goes in every result's _meta.
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is a displayable image for a tool or an implementation.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark" when the icon is meant for one.
	Theme string `json:"theme,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour. They are hints only:
// clients must not trust them from an untrusted server. A nil pointer means
// the schema's default (readOnly false, destructive true, idempotent false,
// openWorld true).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}
