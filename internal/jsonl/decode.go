package jsonl

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonobj"
)

// LineError is an error about one input line. Its message reads
// `FILE:LINE: field "path": cause`, or `FILE:LINE: cause` without a field.
type LineError struct {
	File  string
	Line  int
	Field string // dotted JSON path ("turns.0.text"), "" when unknown
	Err   error
}

func (e *LineError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *LineError) Unwrap() error { return e.Err }

// Errorf returns a *LineError for l, for validation failures that callers
// find after decoding (a negative ISL, an unknown target).
func (l Line) Errorf(format string, args ...any) error {
	return &LineError{File: l.File, Line: l.Num, Err: fmt.Errorf(format, args...)}
}

// FieldErrorf is Errorf for a problem with one field; field is a dotted JSON
// path such as "turns.2.isl".
func (l Line) FieldErrorf(field, format string, args ...any) error {
	return &LineError{File: l.File, Line: l.Num, Field: field, Err: fmt.Errorf(format, args...)}
}

// Decode unmarshals l.Data into v (a pointer) with go-json. Unknown object
// keys are ignored, as encoding/json does; use DecodeStrict to reject them.
// Errors are *LineError values naming the field path when go-json reports
// one (type mismatches), or found by decoding the members one by one (an
// UnmarshalText or UnmarshalJSON method's error, which go-json returns
// without a path).
func (l Line) Decode(v any) error {
	if err := l.checkObject(v); err != nil {
		return err
	}
	if err := json.Unmarshal(l.Data, v); err != nil {
		return l.decodeError(err, v)
	}
	return nil
}

// DecodeStrict is Decode that rejects object keys matching no struct field,
// so a misspelt key ("isl_tokens" for "isl") fails loudly.
func (l Line) DecodeStrict(v any) error {
	if err := l.checkObject(v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(l.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) && !isUnknownField(err) {
			// The stream decoder reports a truncated line as a bare
			// io.ErrUnexpectedEOF; Unmarshal gives the byte offset.
			var discard any
			if uerr := json.Unmarshal(l.Data, &discard); uerr != nil {
				err = uerr
			}
		}
		return l.decodeError(err, v)
	}
	// A line holds exactly one value; "{} {}" is two records glued together.
	if dec.More() {
		return &LineError{File: l.File, Line: l.Num,
			Err: fmt.Errorf("unexpected data after the JSON value at byte offset %d", dec.InputOffset())}
	}
	return nil
}

// checkObject refuses a line that is valid JSON but no object when v is a
// record (a struct or map): the message says so instead of naming the Go
// type that could not be filled.
func (l Line) checkObject(v any) error {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
		return nil
	}
	data := bytes.TrimLeft(l.Data, " \t\r\n")
	if len(data) == 0 || data[0] == '{' || !json.Valid(data) {
		return nil // the decoder's own error says where the JSON breaks
	}
	what := ""
	switch c := data[0]; {
	case c == '[':
		what = "an array"
	case c == '"':
		what = "a string"
	case c == 't' || c == 'f':
		what = "a boolean"
	case c == 'n':
		what = "null"
	default:
		what = "a number"
	}
	return &LineError{File: l.File, Line: l.Num, Err: fmt.Errorf("each line must hold one JSON object; this one is %s", what)}
}

const unknownFieldPrefix = `json: unknown field `

func isUnknownField(err error) bool {
	return strings.HasPrefix(err.Error(), unknownFieldPrefix)
}

// decodeError maps go-json's errors onto a field path or a byte offset.
func (l Line) decodeError(err error, v any) error {
	le := &LineError{File: l.File, Line: l.Num, Err: err}
	var typeErr *json.UnmarshalTypeError
	var synErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		le.Field = typeErr.Field
		le.Err = &typeError{e: typeErr}
	case errors.As(err, &synErr):
		le.Err = fmt.Errorf("invalid JSON at byte offset %d: %w", synErr.Offset, err)
	case isUnknownField(err):
		// go-json reports unknown keys as a plain `json: unknown field "k"`
		// carrying the key only, not its path.
		if k, qerr := strconv.Unquote(err.Error()[len(unknownFieldPrefix):]); qerr == nil {
			le.Field = k
			le.Err = errors.New("unknown field")
		}
	default:
		// An error from a type's UnmarshalText or UnmarshalJSON comes
		// without a path: find the member that fails on its own.
		if t := reflect.TypeOf(v); t != nil {
			le.Field = failingPath(l.Data, t)
		}
	}
	return le
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// failingPath returns the dotted path of the part of raw (valid JSON) that
// does not decode into a value of type t, or "" when raw as a whole is
// the culprit or no single part is.
func failingPath(raw []byte, t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if p := reflect.PointerTo(t); p.Implements(textUnmarshaler) || p.Implements(jsonUnmarshaler) {
		return "" // the value parses itself
	}
	fails := func(raw []byte, t reflect.Type) bool {
		return json.Unmarshal(raw, reflect.New(t).Interface()) != nil
	}
	var parts []jsonobj.Member
	elem := t
	switch t.Kind() {
	case reflect.Struct:
		obj, err := jsonobj.Parse(raw)
		if err != nil {
			return ""
		}
		fields := structFields(t)
		for _, m := range obj {
			ft, ok := fields[m.Key]
			if !ok {
				for name, typ := range fields { // go-json matches keys case-insensitively
					if strings.EqualFold(name, m.Key) {
						ft, ok = typ, true
					}
				}
			}
			if ok && fails(m.Value, ft) {
				return joinPath(m.Key, failingPath(m.Value, ft))
			}
		}
		return ""
	case reflect.Map:
		obj, err := jsonobj.Parse(raw)
		if err != nil {
			return ""
		}
		parts, elem = obj, t.Elem()
	case reflect.Slice, reflect.Array:
		elems, err := jsonobj.Elements(raw)
		if err != nil {
			return ""
		}
		for i, e := range elems {
			parts = append(parts, jsonobj.Member{Key: strconv.Itoa(i), Value: e})
		}
		elem = t.Elem()
	}
	for _, m := range parts {
		if fails(m.Value, elem) {
			return joinPath(m.Key, failingPath(m.Value, elem))
		}
	}
	return ""
}

func joinPath(key, rest string) string {
	if rest == "" {
		return key
	}
	return key + "." + rest
}

// structFields maps the JSON names of t's fields (embedded structs
// flattened) to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			for k, v := range structFields(f.Type) {
				out[k] = v
			}
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// typeError restates a go-json type error without the Go struct path, which
// LineError already shows as the JSON field path; it still unwraps to the
// original so errors.As finds *json.UnmarshalTypeError and any cause (such
// as the error of an UnmarshalText method).
type typeError struct{ e *json.UnmarshalTypeError }

func (t *typeError) Error() string {
	if t.e.Err != nil {
		return t.e.Err.Error()
	}
	if t.e.Type == nil {
		return "cannot unmarshal " + t.e.Value
	}
	return "cannot unmarshal " + t.e.Value + " into " + t.e.Type.String()
}

func (t *typeError) Unwrap() error { return t.e }
