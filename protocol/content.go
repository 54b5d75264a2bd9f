package protocol

import "github.com/wymcp/wymcp/internal/strictjson"

// Content is one block of a tool result: *TextContent, *ImageContent,
// *AudioContent, *ResourceLink or *EmbeddedResource. Each encodes itself
// with its "type" member, so a zero-value literal is a valid block.
type Content interface {
	// ContentType returns the block's "type" member.
	ContentType() string
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

func (*TextContent) ContentType() string      { return "text" }
func (*ImageContent) ContentType() string     { return "image" }
func (*AudioContent) ContentType() string     { return "audio" }
func (*ResourceLink) ContentType() string     { return "resource_link" }
func (*EmbeddedResource) ContentType() string { return "resource" }

// The wire forms. encoding/json (and goccy) encode []byte as standard
// Base64, which is what image, audio and blob data are on the wire.

type wireText struct {
	Type        string         `json:"type"`
	Text        string         `json:"text"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type wireMedia struct {
	Type        string         `json:"type"`
	Data        []byte         `json:"data"`
	MimeType    string         `json:"mimeType"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type wireLink struct {
	Type        string         `json:"type"`
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MimeType    string         `json:"mimeType,omitempty"`
	Size        *int64         `json:"size,omitempty"`
	Icons       []Icon         `json:"icons,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

type wireEmbedded struct {
	Type        string           `json:"type"`
	Resource    ResourceContents `json:"resource"`
	Annotations *Annotations     `json:"annotations,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return strictjson.Marshal(wireText{"text", c.Text, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	return strictjson.Marshal(wireMedia{"image", c.Data, c.MimeType, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	return strictjson.Marshal(wireMedia{"audio", c.Data, c.MimeType, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return strictjson.Marshal(wireLink{"resource_link", c.URI, c.Name, c.Title, c.Description, c.MimeType, c.Size, c.Icons, c.Annotations, c.Meta})
}

// MarshalJSON implements json.Marshaler.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	return strictjson.Marshal(wireEmbedded{"resource", c.Resource, c.Annotations, c.Meta})
}

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
