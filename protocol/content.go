package protocol

// Content is one block of a tool result: *TextContent, *ImageContent,
// *AudioContent, *ResourceLink or *EmbeddedResource, and nothing else (the
// set is the schema's, so the interface is closed). The server writes each
// with its "type" member.
type Content interface {
	content()
}

// Annotations tell a client how to use a content block.
type Annotations struct {
	// Audience is any of "user" and "assistant".
	Audience []string `json:"audience,omitempty"`
	// Priority is in 0..1; nil when unset.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp.
	LastModified string `json:"lastModified,omitempty"`
}

// TextContent is a text block. Text is always encoded, even when empty.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        map[string]any
}

// ImageContent is an image; Data is the raw bytes (encoded as Base64).
type ImageContent struct {
	Data        []byte
	MimeType    string
	Annotations *Annotations
	Meta        map[string]any
}

// AudioContent is audio; Data is the raw bytes (encoded as Base64).
type AudioContent struct {
	Data        []byte
	MimeType    string
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceLink points to a resource the client may read elsewhere.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	// Size in bytes; nil when unknown.
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        map[string]any
}

// EmbeddedResource carries a resource's contents inside the result.
type EmbeddedResource struct {
	Resource    ResourceContents
	Annotations *Annotations
	Meta        map[string]any
}

// ResourceContents is text or binary contents of a resource: set Text, or
// Blob (raw bytes, encoded as Base64), not both.
type ResourceContents struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     *string        `json:"text,omitempty"`
	Blob     []byte         `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

func (*TextContent) content()      {}
func (*ImageContent) content()     {}
func (*AudioContent) content()     {}
func (*ResourceLink) content()     {}
func (*EmbeddedResource) content() {}

// CallToolResult is the result of tools/call (resultType and _meta are
// added by the server when it encodes the answer).
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is any JSON value; it must conform to the tool's
	// output schema when one is declared.
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitzero"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// ErrorResult returns an isError result with one text block: the answer to
// a tool execution error, which the model can read and correct.
func ErrorResult(text string) *CallToolResult {
	r := TextResult(text)
	r.IsError = true
	return r
}

// TextResult returns a result with one text block.
func TextResult(text string) *CallToolResult {
	// One allocation, not three: the result, its one-element content slice
	// and the block live in one object, which the garbage collector frees
	// as one. The most common result a tool returns is this one.
	one := &struct {
		result  CallToolResult
		content [1]Content
		block   TextContent
	}{}
	one.block.Text = text
	one.content[0] = &one.block
	one.result.Content = one.content[:]
	return &one.result
}
