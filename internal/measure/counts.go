package measure

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonl"
)

// fieldError is bad input in one field of a record; Line turns it into a
// *jsonl.LineError naming the file and line, so the message reads
// FILE:LINE: field "path": cause.
type fieldError struct {
	Field string
	Err   error
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %v", e.Field, e.Err) }
func (e *fieldError) Unwrap() error { return e.Err }

func fieldErrorf(field, format string, args ...any) error {
	return &fieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// prefixField moves err (a *fieldError) under prefix ("result" + "usage").
func prefixField(prefix string, err error) error {
	if fe, ok := err.(*fieldError); ok {
		return &fieldError{Field: prefix + "." + fe.Field, Err: fe.Err}
	}
	return err
}

// count reads a token count: absent or null is no count (nil), anything
// but a non-negative JSON integer is bad input.
func count(raw json.RawMessage, field string) (*int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	n, err := strconv.Atoi(string(t))
	if err != nil || n < 0 || t[0] == '+' {
		return nil, fieldErrorf(field, "must be a non-negative integer, got %s", abbreviate(t))
	}
	return &n, nil
}

// abbreviate keeps an error message one short line.
func abbreviate(raw []byte) string {
	const max = 40
	if len(raw) > max {
		return string(raw[:max]) + "..."
	}
	return string(raw)
}

// promptTokens reads usage.prompt_tokens from a usage object (raw may be
// absent or null): a usage without prompt_tokens is no server count, not a
// count of 0.
func promptTokens(usage json.RawMessage) (*int, error) {
	if t := bytes.TrimSpace(usage); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var u struct {
		PromptTokens json.RawMessage `json:"prompt_tokens"`
	}
	if err := json.Unmarshal(usage, &u); err != nil {
		return nil, fieldErrorf("usage", "must be an object")
	}
	n, err := count(u.PromptTokens, "prompt_tokens")
	return n, prefixField("usage", err)
}

// cachedTokens is a send record usage's cached_tokens (the server's
// prompt_tokens_details.cached_tokens), nil when absent.
func cachedTokens(usage json.RawMessage) (*int, error) {
	if t := bytes.TrimSpace(usage); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var u struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
	}
	if err := json.Unmarshal(usage, &u); err != nil {
		return nil, fieldErrorf("usage", "must be an object")
	}
	n, err := count(u.CachedTokens, "cached_tokens")
	return n, prefixField("usage", err)
}

// withLine names l's file and line in a record's field error.
func withLine(l jsonl.Line, err error) error {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return err
	}
	le := &jsonl.LineError{File: l.File, Line: l.Num, Field: fe.Field, Err: fe.Err}
	if bad, ok := err.(*BadRecordError); ok {
		return &BadRecordError{Kind: bad.Kind, Err: le}
	}
	return le
}

// decodeHead decodes a record's own fields into v, with a field error
// naming the JSON path instead of go-json's Go type path.
func decodeHead(data []byte, v any) error {
	err := jsonl.Line{Data: data}.Decode(v)
	var le *jsonl.LineError
	if errors.As(err, &le) {
		if le.Field != "" {
			return &fieldError{Field: le.Field, Err: le.Err}
		}
		return le.Err
	}
	return err
}
