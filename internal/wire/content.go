package wire

import (
	"errors"
	"fmt"

	"github.com/wymcp/wymcp/protocol"
)

// The wire forms of the content blocks of package protocol, which writes
// none itself: the encoding of every message is this package's. The
// encoder writes []byte as standard Base64, which is what image, audio and
// blob data are on the wire.

type wireText struct {
	Type        string                `json:"type"`
	Text        string                `json:"text"`
	Annotations *protocol.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any        `json:"_meta,omitempty"`
}

type wireMedia struct {
	Type        string                `json:"type"`
	Data        []byte                `json:"data"`
	MimeType    string                `json:"mimeType"`
	Annotations *protocol.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any        `json:"_meta,omitempty"`
}

type wireLink struct {
	Type        string                `json:"type"`
	URI         string                `json:"uri"`
	Name        string                `json:"name"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	MimeType    string                `json:"mimeType,omitempty"`
	Size        *int64                `json:"size,omitempty"`
	Icons       []protocol.Icon       `json:"icons,omitempty"`
	Annotations *protocol.Annotations `json:"annotations,omitempty"`
	Meta        map[string]any        `json:"_meta,omitempty"`
}

type wireEmbedded struct {
	Type        string                    `json:"type"`
	Resource    protocol.ResourceContents `json:"resource"`
	Annotations *protocol.Annotations     `json:"annotations,omitempty"`
	Meta        map[string]any            `json:"_meta,omitempty"`
}

// errNilContent refuses a nil block: the schema has no null content.
var errNilContent = errors.New("a content block is nil")

// AppendContent appends the JSON of one content block to dst. A plain text
// block (no annotations, no _meta), nearly every block a tool returns, is
// written by hand; the rest go through the encoder.
func AppendContent(dst []byte, c protocol.Content) ([]byte, error) {
	var v any
	switch c := c.(type) {
	case *protocol.TextContent:
		if c == nil {
			return nil, errNilContent
		}
		if c.Annotations == nil && len(c.Meta) == 0 {
			dst = append(dst, `{"type":"text","text":`...)
			dst, err := appendQuote(dst, c.Text)
			if err != nil {
				return nil, err
			}
			return append(dst, '}'), nil
		}
		v = wireText{"text", c.Text, c.Annotations, c.Meta}
	case *protocol.ImageContent:
		if c == nil {
			return nil, errNilContent
		}
		v = wireMedia{"image", c.Data, c.MimeType, c.Annotations, c.Meta}
	case *protocol.AudioContent:
		if c == nil {
			return nil, errNilContent
		}
		v = wireMedia{"audio", c.Data, c.MimeType, c.Annotations, c.Meta}
	case *protocol.ResourceLink:
		if c == nil {
			return nil, errNilContent
		}
		v = wireLink{"resource_link", c.URI, c.Name, c.Title, c.Description, c.MimeType, c.Size, c.Icons, c.Annotations, c.Meta}
	case *protocol.EmbeddedResource:
		if c == nil {
			return nil, errNilContent
		}
		v = wireEmbedded{"resource", c.Resource, c.Annotations, c.Meta}
	case nil:
		return nil, errNilContent
	default:
		// protocol.Content is closed; this is a type of protocol's that this
		// switch has not learnt.
		return nil, fmt.Errorf("content block of type %T cannot be encoded", c)
	}
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// MarshalContent returns the JSON of one content block.
func MarshalContent(c protocol.Content) (RawJSON, error) { return AppendContent(nil, c) }
