package wire

import (
	"bytes"
	"io"

	"github.com/goccy/go-json/jsontext"
)

// oracle is the scanner Parse used before lex.go: the same walk over a
// body, driven by goccy/go-json's jsontext.Decoder. It is kept, in tests
// only, as the reference the differential fuzz targets hold the lexer to:
// for every input both must accept or refuse alike, and find the same
// members as the same slices of the body.
type oracle struct {
	dec  *jsontext.Decoder
	body []byte
}

// oracleFields are fields as they were before spans, each member a slice of
// the body (nil when absent): what the oracle writes, and what expand turns
// scan's fields into, so that the two compare member by member.
type oracleFields struct {
	jsonrpc, id, method, params, result, error RawJSON

	// Set when params is an object.
	paramsObject                                      bool
	meta, name, uri, arguments, cursor, legacyVersion RawJSON
	inputResponses, requestState                      RawJSON

	// Set when params._meta is an object.
	metaObject bool
	m          oracleMeta

	// Set when _meta's clientInfo is an object.
	clientInfoObject bool
	clientInfo       oracleImplementation
}

// oracleMeta is wireMeta with slices for spans.
type oracleMeta struct {
	ProtocolVersion, ClientCapabilities, ClientInfo, LogLevel, ProgressToken RawJSON
	Traceparent, Tracestate, Baggage                                         RawJSON
}

// oracleImplementation is wireImplementation with slices for spans.
type oracleImplementation struct {
	Name, Version RawJSON
}

// expand returns what f holds in the oracle's form, every member read
// through f.raw, the accessor the package reads them with.
func expand(f *fields) *oracleFields {
	o := new(oracleFields)
	o.jsonrpc, o.id, o.method = f.raw(f.jsonrpc), f.raw(f.id), f.raw(f.method)
	o.params, o.result, o.error = f.raw(f.params), f.raw(f.result), f.raw(f.error)
	o.paramsObject = f.paramsObject
	o.meta, o.name, o.uri = f.raw(f.meta), f.raw(f.name), f.raw(f.uri)
	o.arguments, o.cursor, o.legacyVersion = f.raw(f.arguments), f.raw(f.cursor), f.raw(f.legacyVersion)
	o.inputResponses, o.requestState = f.raw(f.inputResponses), f.raw(f.requestState)
	o.metaObject = f.metaObject
	w := &f.m
	o.m.ProtocolVersion, o.m.ClientCapabilities = f.raw(w.ProtocolVersion), f.raw(w.ClientCapabilities)
	o.m.ClientInfo, o.m.LogLevel, o.m.ProgressToken = f.raw(w.ClientInfo), f.raw(w.LogLevel), f.raw(w.ProgressToken)
	o.m.Traceparent, o.m.Tracestate, o.m.Baggage = f.raw(w.Traceparent), f.raw(w.Tracestate), f.raw(w.Baggage)
	o.clientInfoObject = f.clientInfoObject
	o.clientInfo.Name, o.clientInfo.Version = f.raw(f.clientInfo.Name), f.raw(f.clientInfo.Version)
	return o
}

// oracleScan is scan, done by the oracle.
func oracleScan(body []byte, f *oracleFields) error {
	s := &oracle{dec: jsontext.NewDecoder(bytes.NewBuffer(body)), body: body}
	return s.message(f)
}

// oracleScanParams is scanParams, done by the oracle.
func oracleScanParams(params []byte, f *oracleFields) error {
	s := &oracle{dec: jsontext.NewDecoder(bytes.NewBuffer(params)), body: params}
	if s.dec.PeekKind() != '{' {
		return s.value(&f.params)
	}
	f.paramsObject = true
	return s.paramsObject(f)
}

var errOracleTrailing = &jsontext.SyntacticError{}

func (s *oracle) message(f *oracleFields) error {
	err := s.object(func(name []byte) error {
		switch string(name) {
		case "jsonrpc":
			return s.value(&f.jsonrpc)
		case "id":
			return s.value(&f.id)
		case "method":
			return s.value(&f.method)
		case "result":
			return s.value(&f.result)
		case "error":
			return s.value(&f.error)
		case "params":
			if s.dec.PeekKind() != '{' {
				return s.value(&f.params)
			}
			f.paramsObject = true
			return s.paramsObject(f)
		}
		return s.dec.SkipValue()
	})
	if err != nil {
		return err
	}
	if _, err := s.dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errOracleTrailing
		}
		return err
	}
	return nil
}

func (s *oracle) paramsObject(f *oracleFields) error {
	start := s.dec.InputOffset()
	err := s.object(func(name []byte) error {
		switch string(name) {
		case "_meta":
			if s.dec.PeekKind() != '{' {
				return s.value(&f.meta)
			}
			f.metaObject = true
			return s.metaObject(f)
		case "name":
			return s.value(&f.name)
		case "uri":
			return s.value(&f.uri)
		case "arguments":
			return s.value(&f.arguments)
		case "cursor":
			return s.value(&f.cursor)
		case "protocolVersion":
			return s.value(&f.legacyVersion)
		case "inputResponses":
			return s.value(&f.inputResponses)
		case "requestState":
			return s.value(&f.requestState)
		}
		return s.dec.SkipValue()
	})
	f.params = s.trimmed(start)
	return err
}

func (s *oracle) metaObject(f *oracleFields) error {
	start := s.dec.InputOffset()
	m := &f.m
	err := s.object(func(name []byte) error {
		switch string(name) {
		case MetaProtocolVersion:
			return s.value(&m.ProtocolVersion)
		case MetaClientCapabilities:
			return s.value(&m.ClientCapabilities)
		case MetaClientInfo:
			if s.dec.PeekKind() != '{' {
				return s.value(&m.ClientInfo)
			}
			f.clientInfoObject = true
			ciStart := s.dec.InputOffset()
			err := s.object(func(name []byte) error {
				switch string(name) {
				case "name":
					return s.value(&f.clientInfo.Name)
				case "version":
					return s.value(&f.clientInfo.Version)
				}
				return s.dec.SkipValue()
			})
			m.ClientInfo = s.trimmed(ciStart)
			return err
		case MetaLogLevel:
			return s.value(&m.LogLevel)
		case "progressToken":
			return s.value(&m.ProgressToken)
		case "traceparent":
			return s.value(&m.Traceparent)
		case "tracestate":
			return s.value(&m.Tracestate)
		case "baggage":
			return s.value(&m.Baggage)
		}
		return s.dec.SkipValue()
	})
	f.meta = s.trimmed(start)
	return err
}

func (s *oracle) object(member func(name []byte) error) error {
	if _, err := s.dec.ReadToken(); err != nil {
		return err
	}
	for s.dec.PeekKind() != '}' {
		raw, err := s.dec.ReadValue()
		if err != nil {
			return err
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if name, err = jsontext.AppendUnquote(nil, raw); err != nil {
				return err
			}
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := s.dec.ReadToken()
	return err
}

func (s *oracle) value(dst *RawJSON) error {
	v, err := s.dec.ReadValue()
	if err != nil {
		return err
	}
	end := s.dec.InputOffset()
	*dst = RawJSON(s.body[end-int64(len(v)) : end : end])
	return nil
}

func (s *oracle) trimmed(start int64) RawJSON {
	end := s.dec.InputOffset()
	b := s.body[start:end:end]
	for len(b) > 0 && b[0] != '{' {
		b = b[1:]
	}
	return RawJSON(b)
}
