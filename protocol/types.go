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

// Tool is a tool as tools/list shows it. Schemas are kept as the bytes the
// server was built with, so a raw schema reaches clients byte-for-byte.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  RawJSON          `json:"inputSchema"`
	OutputSchema RawJSON          `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`
}

// HeaderParam is a tool argument that clients mirror in an HTTP header,
// declared by "x-mcp-header": "<Name>" on a property of the input schema
// (SEP-2243). A gateway can route on the header without parsing the body;
// the server checks that the two agree (-32020 when they do not).
type HeaderParam struct {
	// Name is the header's suffix: the header is Mcp-Param-<Name>.
	Name string
	// Path is the argument's place: property names from the root object
	// through nested "properties".
	Path []string
	// Type is the property's JSON Schema type: "string", "integer" or
	// "boolean".
	Type string
}
