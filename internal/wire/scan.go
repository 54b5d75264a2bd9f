package wire

import "github.com/wymcp/wymcp/internal/strictjson"

// scanner walks one body with a lexer. A Scratch holds one, so that the
// lexer keeps its stacks and scratch space from one body to the next and
// scanning an ordinary request allocates nothing. (It was pooled on its own:
// the pool's Get and Put, and the closure each scan ran through, were code
// every request ran for nothing, since the Scratch is reused already.)
type scanner struct {
	lex strictjson.Lexer
	// objs hold the state of the objects the scanner reads, one per level
	// (the message, params, _meta, clientInfo): kept with the scanner, they
	// are not cleared for every body, as new ones would be.
	objs [4]strictjson.Object
}

// scan reads body, an object, into f with s. Any error is a syntax error,
// or errBodyTooLong for a body past maxSpanBody, which it does not read.
func scan(s *scanner, body []byte, f *fields) error {
	if !fitsSpans(body) {
		return errBodyTooLong
	}
	f.body = body
	s.lex.Reset(body)
	err := s.message(f)
	s.lex.Release()
	return err
}

// message reads the top level of a message.
func (s *scanner) message(f *fields) error {
	err := s.object(&s.objs[0], func(name []byte) error {
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
			if s.lex.Peek() != '{' {
				return s.value(&f.params)
			}
			f.paramsObject = true
			return s.paramsObject(f)
		}
		return s.lex.Skip()
	})
	if err != nil {
		return err
	}
	return s.lex.End() // nothing but white space after the object
}

func (s *scanner) paramsObject(f *fields) error {
	start := s.lex.Pos()
	err := s.object(&s.objs[1], func(name []byte) error {
		switch string(name) {
		case "_meta":
			if s.lex.Peek() != '{' {
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
		return s.lex.Skip()
	})
	f.params = s.trimmed(start)
	return err
}

func (s *scanner) metaObject(f *fields) error {
	start := s.lex.Pos()
	m := &f.m
	err := s.object(&s.objs[2], func(name []byte) error {
		switch string(name) {
		case MetaProtocolVersion:
			return s.value(&m.ProtocolVersion)
		case MetaClientCapabilities:
			return s.value(&m.ClientCapabilities)
		case MetaClientInfo:
			if s.lex.Peek() != '{' {
				return s.value(&m.ClientInfo)
			}
			f.clientInfoObject = true
			ciStart := s.lex.Pos()
			err := s.object(&s.objs[3], func(name []byte) error {
				switch string(name) {
				case "name":
					return s.value(&f.clientInfo.Name)
				case "version":
					return s.value(&f.clientInfo.Version)
				}
				return s.lex.Skip()
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
		return s.lex.Skip()
	})
	f.meta = s.trimmed(start)
	return err
}

// object reads an object, its state in o, calling member with each name
// (by meaning: an escaped name is compared unescaped, "\u006dethod" is
// "method") and the lexer before the member's value; member must read or
// skip that value. The lexer has already refused a duplicate name.
func (s *scanner) object(o *strictjson.Object, member func(name []byte) error) error {
	if err := s.lex.OpenObject(o, nil); err != nil {
		return err
	}
	for {
		name, ok, err := s.lex.Member(o)
		if !ok {
			return err
		}
		if err := member(name); err != nil {
			return err
		}
	}
}

// value reads the next value into *dst as its span of the body.
func (s *scanner) value(dst *span) error {
	start, end, err := s.lex.Value()
	if err != nil {
		return err
	}
	*dst = spanOf(start, end)
	return nil
}

// trimmed returns the span from start, the offset of an opening brace the
// caller peeked at, to the lexer's offset: the object just read.
func (s *scanner) trimmed(start int) span {
	return spanOf(start, s.lex.Pos())
}

// scanParams reads a params value alone into f, as scan reads a body; the
// spans are offsets into params. It serves a Message that Parse did not
// make, which has no Scratch: its scanner is its own.
func scanParams(params []byte, f *fields) error {
	if !fitsSpans(params) {
		return errBodyTooLong
	}
	f.body = params
	s := new(scanner)
	s.lex.Reset(params)
	defer s.lex.Close()
	if s.lex.Peek() != '{' {
		return s.value(&f.params)
	}
	f.paramsObject = true
	return s.paramsObject(f)
}
