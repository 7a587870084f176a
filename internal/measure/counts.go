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

// promptTokens reads the server's prompt count from a usage object (raw
// may be absent or null): usage.prompt_tokens, or the Responses API's
// usage.input_tokens. A usage without either is no server count, not a
// count of 0.
func promptTokens(usage json.RawMessage) (*int, error) {
	if t := bytes.TrimSpace(usage); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var u struct {
		PromptTokens json.RawMessage `json:"prompt_tokens"`
		InputTokens  json.RawMessage `json:"input_tokens"`
	}
	if err := json.Unmarshal(usage, &u); err != nil {
		return nil, fieldErrorf("usage", "must be an object")
	}
	if isNull(u.PromptTokens) && !isNull(u.InputTokens) {
		n, err := count(u.InputTokens, "input_tokens")
		return n, prefixField("usage", err)
	}
	n, err := count(u.PromptTokens, "prompt_tokens")
	return n, prefixField("usage", err)
}

// cachedTokens is a usage's cached prompt tokens, nil when absent: send's
// flattened cached_tokens, or the server's own
// prompt_tokens_details.cached_tokens (input_tokens_details.cached_tokens
// for the Responses API).
func cachedTokens(usage json.RawMessage) (*int, error) {
	if t := bytes.TrimSpace(usage); len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var u struct {
		CachedTokens json.RawMessage `json:"cached_tokens"`
		Prompt       json.RawMessage `json:"prompt_tokens_details"`
		Input        json.RawMessage `json:"input_tokens_details"`
	}
	if err := json.Unmarshal(usage, &u); err != nil {
		return nil, fieldErrorf("usage", "must be an object")
	}
	if !isNull(u.CachedTokens) {
		n, err := count(u.CachedTokens, "cached_tokens")
		return n, prefixField("usage", err)
	}
	for _, d := range []struct {
		name string
		raw  json.RawMessage
	}{{"prompt_tokens_details", u.Prompt}, {"input_tokens_details", u.Input}} {
		if isNull(d.raw) {
			continue
		}
		var details struct {
			CachedTokens json.RawMessage `json:"cached_tokens"`
		}
		if err := json.Unmarshal(d.raw, &details); err != nil {
			return nil, fieldErrorf("usage."+d.name, "must be an object")
		}
		if !isNull(details.CachedTokens) {
			n, err := count(details.CachedTokens, "cached_tokens")
			return n, prefixField("usage."+d.name, err)
		}
	}
	return nil, nil
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
