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
// data) is an error. It validates once, then slices the members out of the
// document without decoding them.
func Parse(data []byte) (Object, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if !json.Valid(data) {
		// Decode to get go-json's description of what is wrong.
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("invalid JSON")
	}
	var obj Object
	i := 1
	for {
		i = skipSpace(data, i)
		switch data[i] {
		case '}':
			return obj, nil
		case ',':
			i = skipSpace(data, i+1)
		}
		end := skipString(data, i)
		var key string
		if err := json.Unmarshal(data[i:end], &key); err != nil {
			return nil, err
		}
		i = skipSpace(data, end) + 1 // past ':'
		i = skipSpace(data, i)
		vend := skipValue(data, i)
		obj = append(obj, Member{Key: key, Value: json.RawMessage(data[i:vend])})
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; b[i] != '"'; i++ {
		if b[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipValue returns the index after the (valid) value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	default: // number, true, false, null
		for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\n\r"), rune(b[i])) {
			i++
		}
		return i
	}
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

// AppendMember returns the object text data (as Parse read it, without
// key) with "key": value added at the end, copying data once instead of
// re-serialising every member. It is Set + Marshal for a new key.
func AppendMember(data []byte, key string, value any) ([]byte, error) {
	raw, err := json.MarshalWithOption(value, json.DisableHTMLEscape())
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", key, err)
	}
	k, _ := json.MarshalWithOption(key, json.DisableHTMLEscape())
	data = bytes.TrimSpace(data)
	body := bytes.TrimRight(data[:len(data)-1], " \t\r\n") // without '}'
	out := make([]byte, 0, len(body)+len(k)+len(raw)+3)
	out = append(out, body...)
	if len(body) > 1 { // not "{"
		out = append(out, ',')
	}
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, raw...)
	return append(out, '}'), nil
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
