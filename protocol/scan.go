package protocol

import (
	"bytes"
	"io"
	"sync"

	"github.com/goccy/go-json/jsontext"
)

// fields are the members of a message the server reads, found in one pass
// over the body: the top level, params, params._meta and its clientInfo.
// Every value is a slice of the body as sent (nil when absent), so nothing
// is copied or decoded twice; the body must outlive the message, as a
// request's body does.
//
// One strict tokenizer does the whole pass: duplicate names (compared after
// unescaping), invalid UTF-8, lone surrogates, nesting past MaxDepth and
// trailing data are syntax errors wherever they are, including inside
// members the server never reads. Shape (a params that is not an object) is
// recorded, not judged: Parse and ParseRequest decide what it means.
type fields struct {
	jsonrpc, id, method, params, result, error RawJSON

	// Set when params is an object.
	paramsObject                                      bool
	meta, name, uri, arguments, cursor, legacyVersion RawJSON

	// Set when params._meta is an object.
	metaObject bool
	m          wireMeta

	// Set when _meta's clientInfo is an object.
	clientInfoObject bool
	clientInfo       wireImplementation
}

// wireMeta is a request `_meta` envelope, every member kept raw.
type wireMeta struct {
	ProtocolVersion, ClientCapabilities, ClientInfo, LogLevel, ProgressToken RawJSON
	Traceparent, Tracestate, Baggage                                         RawJSON
}

type wireImplementation struct {
	Name, Version RawJSON
}

// scanner walks one body. Decoders are pooled: a jsontext.Decoder over a
// bytes.Buffer reads the buffer in place, and Reset keeps its state arrays.
type scanner struct {
	dec  *jsontext.Decoder
	buf  bytes.Buffer
	body []byte
}

var scanners = sync.Pool{New: func() any { return &scanner{dec: jsontext.NewDecoder(new(bytes.Buffer))} }}

// withScanner runs read with a pooled scanner set on body.
func withScanner(body []byte, read func(*scanner) error) error {
	s := scanners.Get().(*scanner)
	defer func() {
		s.body = nil
		s.buf.Reset()
		s.dec.Reset(&s.buf)
		scanners.Put(s)
	}()
	s.body = body
	s.buf = *bytes.NewBuffer(body)
	s.dec.Reset(&s.buf)
	return read(s)
}

// scan reads body, an object, into f. Any error is a syntax error.
func scan(body []byte, f *fields) error {
	return withScanner(body, func(s *scanner) error { return s.message(f) })
}

// message reads the top level of a message.
func (s *scanner) message(f *fields) error {
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
			err = errTrailing
		}
		return err
	}
	return nil
}

func (s *scanner) paramsObject(f *fields) error {
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
		}
		return s.dec.SkipValue()
	})
	f.params = s.trimmed(start)
	return err
}

func (s *scanner) metaObject(f *fields) error {
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

// object reads an object, calling member for each name with the decoder
// before the member's value; member must read or skip that value.
func (s *scanner) object(member func(name []byte) error) error {
	if _, err := s.dec.ReadToken(); err != nil { // '{'
		return err
	}
	for s.dec.PeekKind() != '}' {
		raw, err := s.dec.ReadValue() // a name, as its JSON string
		if err != nil {
			return err
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			// An escaped name is compared by what it means ("\u006dethod"
			// is "method"; the tokenizer already refused it as a duplicate).
			if name, err = jsontext.AppendUnquote(nil, raw); err != nil {
				return err
			}
		}
		if err := member(name); err != nil {
			return err
		}
	}
	_, err := s.dec.ReadToken() // '}'
	return err
}

// value reads the next value into *dst as a slice of the body.
func (s *scanner) value(dst *RawJSON) error {
	v, err := s.dec.ReadValue()
	if err != nil {
		return err
	}
	end := s.dec.InputOffset()
	*dst = RawJSON(s.body[end-int64(len(v)) : end : end])
	return nil
}

// trimmed returns the body from start (an offset before white space and an
// opening brace) to the decoder's offset: the object just read.
func (s *scanner) trimmed(start int64) RawJSON {
	end := s.dec.InputOffset()
	b := s.body[start:end:end]
	for len(b) > 0 && b[0] != '{' {
		b = b[1:]
	}
	return RawJSON(b)
}

// errTrailing stands for a syntax error the decoder did not name.
var errTrailing = &jsontext.SyntacticError{}

// scanParams reads a params value alone into f.
func scanParams(params []byte, f *fields) error {
	return withScanner(params, func(s *scanner) error {
		if s.dec.PeekKind() != '{' {
			return s.value(&f.params)
		}
		f.paramsObject = true
		return s.paramsObject(f)
	})
}
