package wire

import (
	"testing"

	"github.com/wymcp/wymcp/protocol"
)

// TestContentForms pins the wire form of every content block, and holds
// the hand-written plain text block to the encoder's form of wireText.
func TestContentForms(t *testing.T) {
	t.Parallel()
	size := int64(12)
	text := "t"
	cases := []struct {
		c    protocol.Content
		want string
	}{
		{&protocol.TextContent{Text: "a\"<é"}, `{"type":"text","text":"a\"<é"}`},
		{&protocol.TextContent{Text: "x", Meta: map[string]any{"k": 1}}, `{"type":"text","text":"x","_meta":{"k":1}}`},
		{&protocol.ImageContent{Data: []byte{1, 2}, MimeType: "image/png"}, `{"type":"image","data":"AQI=","mimeType":"image/png"}`},
		{&protocol.AudioContent{Data: []byte{3}, MimeType: "audio/wav"}, `{"type":"audio","data":"Aw==","mimeType":"audio/wav"}`},
		{&protocol.ResourceLink{URI: "file:///x", Name: "x", Size: &size}, `{"type":"resource_link","uri":"file:///x","name":"x","size":12}`},
		{&protocol.EmbeddedResource{Resource: protocol.ResourceContents{URI: "u", Text: &text}}, `{"type":"resource","resource":{"uri":"u","text":"t"}}`},
	}
	for _, c := range cases {
		got, err := MarshalContent(c.c)
		if err != nil || string(got) != c.want {
			t.Errorf("%T: got %s, %v; want %s", c.c, got, err, c.want)
		}
	}
	for _, s := range []string{"", "plain", "line\n\"quoted\" <tag> & \u2028 é 😀 \x01"} {
		hand, err1 := MarshalContent(&protocol.TextContent{Text: s})
		ref, err2 := Marshal(wireText{Type: "text", Text: s})
		if err1 != nil || err2 != nil || string(hand) != string(ref) {
			t.Errorf("text %q: hand %s (%v), encoder %s (%v)", s, hand, err1, ref, err2)
		}
	}
	for _, bad := range []protocol.Content{nil, (*protocol.TextContent)(nil), (*protocol.ImageContent)(nil), (*protocol.ResourceLink)(nil)} {
		if b, err := MarshalContent(bad); err == nil {
			t.Errorf("%#v encoded as %s, want an error", bad, b)
		}
	}
}
