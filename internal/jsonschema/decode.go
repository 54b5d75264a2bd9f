package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/wymcp/wymcp/internal/strictjson"
)

// Decode reads a schema document: exactly one strict JSON value (no
// duplicate names, valid UTF-8; strictjson is wymcp's one judge of JSON, so
// a client and this validator read the same schema), with numbers kept as
// json.Number so that "maximum": 2^63 and "multipleOf": 0.01 stay exact.
func Decode(raw []byte) (any, error) {
	if !strictjson.Valid(raw) {
		return nil, errors.New("not a single strict JSON value (duplicate names and invalid UTF-8 are refused)")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}
