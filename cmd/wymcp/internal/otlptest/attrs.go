package otlptest

import (
	"strconv"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// attrOf finds key in kvs and renders its value as a string.
func attrOf(kvs []*commonpb.KeyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.GetKey() != key {
			continue
		}
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue, true
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10), true
		case *commonpb.AnyValue_BoolValue:
			return strconv.FormatBool(v.BoolValue), true
		case *commonpb.AnyValue_DoubleValue:
			return strconv.FormatFloat(v.DoubleValue, 'g', -1, 64), true
		default:
			return kv.GetValue().String(), true
		}
	}
	return "", false
}

// Attrs renders key/value attributes (of a span, an event, a link or a data
// point) as a map of strings, as Attr renders one.
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()], _ = attrOf(kvs, kv.GetKey())
	}
	return m
}
