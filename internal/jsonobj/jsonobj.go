// Package jsonobj reads and rewrites the top level of a JSON object while
// keeping its members in document order, so a filter can add fields to a
// record without reordering or re-encoding what it passes through.
package jsonobj

import (
	"bytes"
	"errors"
	"fmt"

	json "github.com/goccy/go-json"
)

// Member is one top-level "key": value pair; Value is the raw JSON text.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Object is a JSON object's members in document order.
type Object []Member

// Parse reads a JSON object. Anything else (an array, a scalar, trailing
// data) is an error.
func Parse(data []byte) (Object, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var obj Object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %T, not a string", tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		obj = append(obj, Member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return obj, nil
}

// Get returns the raw value of key (the last one, as JSON decoders do).
func (o Object) Get(key string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// Has reports whether key is present with a non-null value.
func (o Object) Has(key string) bool {
	v, ok := o.Get(key)
	return ok && string(v) != "null"
}

// Set replaces key's value in place, or appends the member.
func (o Object) Set(key string, value any) (Object, error) {
	raw, ok := value.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.MarshalWithOption(value, json.DisableHTMLEscape()); err != nil {
			return o, fmt.Errorf("field %q: %w", key, err)
		}
	}
	for i := range o {
		if o[i].Key == key {
			o[i].Value = raw
			return o, nil
		}
	}
	return append(o, Member{Key: key, Value: raw}), nil
}

// Marshal writes the object back as compact JSON, members in order.
func (o Object) Marshal() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.MarshalWithOption(m.Key, json.DisableHTMLEscape())
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
