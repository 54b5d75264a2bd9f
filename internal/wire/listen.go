package wire

// subscriptions/listen (MCP 2026-07-28, SEP-2575; schema
// SubscriptionsListenRequest, SubscriptionFilter,
// SubscriptionsAcknowledgedNotification, SubscriptionsListenResult): a
// client opens a long-lived stream, the answer to its request, on which the
// server sends the notifications the client opted in to. What is encoded
// here is what one stream sends; docs/design.md §5a has the rest.

const (
	// MethodListen opens a listen stream.
	MethodListen = "subscriptions/listen"
	// MethodListenAcknowledged is the first message of every stream: the
	// notification types the server agreed to send.
	MethodListenAcknowledged = "notifications/subscriptions/acknowledged"
	// MethodToolsListChanged tells a client that tools/list may answer
	// otherwise than it did.
	MethodToolsListChanged = "notifications/tools/list_changed"
	// MetaSubscriptionID is the `_meta` key of every message of a stream:
	// the JSON-RPC id of the listen request that opened it.
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// ListenFilter is the notification types a listen request opted in to
// (params.notifications). Only the types a tools server can send are kept:
// the others (promptsListChanged, resourcesListChanged,
// resourceSubscriptions, an extension's) are read for their shape and never
// honoured.
type ListenFilter struct {
	ToolsListChanged bool
}

// listenParams is the shape params of a listen request must have.
type listenParams struct {
	Notifications *struct {
		ToolsListChanged      *bool     `json:"toolsListChanged"`
		PromptsListChanged    *bool     `json:"promptsListChanged"`
		ResourcesListChanged  *bool     `json:"resourcesListChanged"`
		ResourceSubscriptions *[]string `json:"resourceSubscriptions"`
	} `json:"notifications"`
}

var errListenFilter = Errorf(CodeInvalidParams, "Invalid params: params.notifications must be an object of the subscription filter's members (toolsListChanged, promptsListChanged, resourcesListChanged: booleans; resourceSubscriptions: strings)")

// ParseListenFilter reads the filter of a listen request from its params
// (an object, or absent: ParseRequest checked). The filter is required (its
// schema has it so); a member of the schema's with another type is refused,
// as the request then fails its schema. Unknown members are ignored: an
// extension may add its own (the tasks extension's taskIds).
func ParseListenFilter(params RawJSON) (ListenFilter, *Error) {
	var p listenParams
	if params == nil || Unmarshal(params, &p) != nil || p.Notifications == nil {
		return ListenFilter{}, errListenFilter
	}
	n := p.Notifications
	return ListenFilter{ToolsListChanged: n.ToolsListChanged != nil && *n.ToolsListChanged}, nil
}

// ListenFrames are the messages of one stream, encoded once when it opens:
// its id never changes.
type ListenFrames struct {
	// Ack is the notifications/subscriptions/acknowledged message, naming
	// the types honoured (an unhonoured type is left out, not false).
	Ack []byte
	// ToolsChanged is the notifications/tools/list_changed message.
	ToolsChanged []byte
	// Result is the listen request's result object (without its envelope):
	// sent only when the server ends the stream (a drain).
	Result []byte
}

// NewListenFrames encodes the messages of the stream opened by the listen
// request id (its JSON text) that honours honoured. serverMeta is the
// result _meta naming the server (ServerMeta), which the result extends
// with the subscription id.
func NewListenFrames(id string, honoured ListenFilter, serverMeta RawJSON) ListenFrames {
	meta := `{"` + MetaSubscriptionID + `":` + id + `}`
	ack := `{"jsonrpc":"2.0","method":"` + MethodListenAcknowledged + `","params":{"_meta":` + meta + `,"notifications":{`
	if honoured.ToolsListChanged {
		ack += `"toolsListChanged":true`
	}
	ack += `}}}`
	changed := `{"jsonrpc":"2.0","method":"` + MethodToolsListChanged + `","params":{"_meta":` + meta + `}}`
	// serverMeta is an object with at least one member: the id joins it.
	result := make([]byte, 0, 64+len(serverMeta)+len(id))
	result = append(result, `{"resultType":"`+ResultTypeComplete+`","_meta":`...)
	result = append(result, serverMeta[:len(serverMeta)-1]...)
	result = append(result, `,"`+MetaSubscriptionID+`":`...)
	result = append(result, id...)
	result = append(result, `}}`...)
	return ListenFrames{Ack: []byte(ack), ToolsChanged: []byte(changed), Result: result}
}
