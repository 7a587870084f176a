// Package jsonobj reads and rewrites the top level of a JSON object while
// keeping its members in document order, so a filter can add fields to a
// record without reordering or re-encoding what it passes through.
package jsonobj

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

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
	if err := validate(data); err != nil {
		return nil, err
	}
	return Members(data)
}

func validate(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	// Decode to get go-json's description of what is wrong.
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

// The splitters below take values cut from a document Parse validated
// (a member, or a part of one): they check the kind of value, not its
// syntax again. Given invalid JSON they return garbage, never panic.

// Members splits a valid JSON object into its members.
func Members(raw []byte) (Object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	// The members are gathered on the stack and returned in a slice of
	// their number: most objects (a content part, an image_url) have one
	// or two members, and a payload log splits several per request.
	var room [24]Member // a send record's members
	obj := room[:0]
	for i := 1; ; {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		if i >= len(raw) || raw[i] != '"' {
			return append(make(Object, 0, len(obj)), obj...), nil // '}'
		}
		end := skipString(raw, i)
		key, ok := knownKey(raw[i+1 : end-1])
		if !ok {
			var err error
			if key, err = String(raw[i:end]); err != nil {
				return nil, err
			}
		}
		i = skipSpace(raw, skipSpace(raw, end)+1) // past ':'
		vend := skipValue(raw, i)
		obj = append(obj, Member{Key: key, Value: json.RawMessage(raw[i:vend])})
		i = vend
	}
}

// knownKey returns the keys of requests and records, and the values of
// their "type" and "role", without allocating a string for each.
func knownKey(b []byte) (string, bool) {
	switch string(b) {
	case "model":
		return "model", true
	case "messages":
		return "messages", true
	case "role":
		return "role", true
	case "content":
		return "content", true
	case "type":
		return "type", true
	case "text":
		return "text", true
	case "max_tokens":
		return "max_tokens", true
	case "max_completion_tokens":
		return "max_completion_tokens", true
	case "stream":
		return "stream", true
	case "tool_calls":
		return "tool_calls", true
	case "tools":
		return "tools", true
	case "kind":
		return "kind", true
	case "payload":
		return "payload", true
	case "image_url":
		return "image_url", true
	case "url":
		return "url", true
	case "detail":
		return "detail", true
	case "user":
		return "user", true
	case "assistant":
		return "assistant", true
	case "system":
		return "system", true
	case "input_image":
		return "input_image", true
	case "input_text":
		return "input_text", true
	}
	return "", false
}

// Elements splits a valid JSON array into its elements.
func Elements(raw []byte) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("not a JSON array")
	}
	var out []json.RawMessage
	for i := 1; ; {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		if i >= len(raw) || raw[i] == ']' {
			return out, nil
		}
		end := skipValue(raw, i)
		out = append(out, json.RawMessage(raw[i:end]))
		i = end
	}
}

// IsString reports whether raw is a JSON string (not checking its body).
func IsString(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '"'
}

// String decodes a valid JSON string as encoding/json does. Common texts
// (valid UTF-8, escapes other than surrogates) are decoded here without
// go-json's copy of the input; the rest goes to go-json.
func String(raw []byte) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", errors.New("not a JSON string")
	}
	body := raw[1 : len(raw)-1]
	if len(body) <= len("max_completion_tokens") {
		if s, ok := knownKey(body); ok {
			return s, nil
		}
	}
	if bytes.IndexByte(body, '\\') < 0 {
		if utf8.Valid(body) {
			return string(body), nil
		}
	} else if b, ok := unescapeTo(make([]byte, 0, len(body)), body); ok {
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// AppendString appends the value of the valid JSON string raw to dst, as
// String decodes it, without a string of its own in between: a request's
// texts are joined into one buffer instead of each being allocated and
// then copied.
func AppendString(dst, raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return dst, errors.New("not a JSON string")
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		if utf8.Valid(body) {
			return append(dst, body...), nil
		}
	} else if out, ok := unescapeTo(dst, body); ok {
		return out, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return dst, err
	}
	return append(dst, s...), nil
}

// unescapeTo appends a string body that holds a backslash to out; ok is
// false for what it leaves to go-json: surrogate escapes, invalid UTF-8,
// malformed escapes (out's spare capacity may then have been written).
func unescapeTo(out, body []byte) ([]byte, bool) {
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			j = len(body) - i
		}
		chunk := body[i : i+j]
		if !utf8.Valid(chunk) {
			return out, false
		}
		out = append(out, chunk...)
		if i += j; i == len(body) {
			break
		}
		if i+1 >= len(body) {
			return out, false
		}
		switch c := body[i+1]; c {
		case '"', '\\', '/':
			out = append(out, c)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+6 > len(body) {
				return out, false
			}
			r, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return out, false
			}
			out = utf8.AppendRune(out, rune(r))
			i += 4
		default:
			return out, false
		}
		i += 2
	}
	return out, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"':
// after the first quote not escaped by an odd run of backslashes.
func skipString(b []byte, i int) int {
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
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
		return len(b)
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
	return appendMember(data, key, value, false)
}

// AppendMemberInPlace is AppendMember written over data's closing brace
// and on into its spare capacity, so that a line carrying an image's
// megabytes is not copied to gain one member. It writes in place only
// when data ends with its closing brace, right after its last member, and
// has the room; else it copies as AppendMember does. Bytes before the
// brace are never changed, so that calling it again on the same data
// replaces the member added before; the caller gives up data otherwise.
func AppendMemberInPlace(data []byte, key string, value any) ([]byte, error) {
	return appendMember(data, key, value, true)
}

const jsonSpace = " \t\r\n"

func appendMember(data []byte, key string, value any, inPlace bool) ([]byte, error) {
	raw, err := json.MarshalWithOption(value, json.DisableHTMLEscape())
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", key, err)
	}
	k := appendKey(nil, key)
	lead := len(data) - len(bytes.TrimLeft(data, jsonSpace))
	trimmed := bytes.TrimSpace(data)
	body := bytes.TrimRight(trimmed[:len(trimmed)-1], jsonSpace) // without '}'
	n := len(body) + len(k) + len(raw) + 3
	var out []byte
	if inPlace && lead+len(body) == len(data)-1 && cap(body) >= n {
		out = body // the brace is data's last byte, and the first written over
	} else {
		out = append(make([]byte, 0, n), body...)
	}
	if len(body) > 1 { // not "{"
		out = append(out, ',')
	}
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, raw...)
	return append(out, '}'), nil
}

// Marshal writes the object back as JSON, members in order, each value as
// it was read.
func (o Object) Marshal() []byte {
	n := 2
	for _, m := range o {
		n += len(m.Key) + len(m.Value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKey(b, m.Key)
		b = append(b, ':')
		b = append(b, m.Value...)
	}
	return append(b, '}')
}

// appendKey appends key as a JSON string; keys that need no escaping (all
// of islkit's) are copied as they are.
func appendKey(b []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			k, _ := json.MarshalWithOption(key, json.DisableHTMLEscape())
			return append(b, k...)
		}
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"')
}
