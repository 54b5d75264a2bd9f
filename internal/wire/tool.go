package wire

import "github.com/wymcp/wymcp/protocol"

// Tool is a tool as tools/list shows it. Schemas are kept as the bytes the
// server was built with, so a raw schema reaches clients byte-for-byte.
type Tool struct {
	Name         string                    `json:"name"`
	Title        string                    `json:"title,omitempty"`
	Description  string                    `json:"description,omitempty"`
	InputSchema  RawJSON                   `json:"inputSchema"`
	OutputSchema RawJSON                   `json:"outputSchema,omitempty"`
	Annotations  *protocol.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []protocol.Icon           `json:"icons,omitempty"`
	Meta         map[string]any            `json:"_meta,omitempty"`
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
