package jsonl

import (
	"strings"
	"testing"
)

// TestReaderAcceptsBOMAtFileStart: a UTF-8 byte order mark at the start of
// a file is not part of the first record, as Python's utf-8-sig reads it
// (issue 11, item 13).
func TestReaderAcceptsBOMAtFileStart(t *testing.T) {
	r := NewReader(strings.NewReader("\ufeff{\"a\":1}\n{\"b\":2}\n"), "in")
	lines, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0] != (got{1, `{"a":1}`}) || lines[1] != (got{2, `{"b":2}`}) {
		t.Errorf("lines %v", lines)
	}
	// A file of a BOM alone holds no record.
	if lines, err := readAll(t, NewReader(strings.NewReader("\ufeff\n"), "in")); err != nil || len(lines) != 0 {
		t.Errorf("BOM only: %v, %v", lines, err)
	}
}

// TestNonObjectLineSaysSo: a line that is a JSON array (or string, number)
// where a record is expected says that each line must be an object, not
// which Go type it failed to fill (issue 11, item 13).
func TestNonObjectLineSaysSo(t *testing.T) {
	for in, what := range map[string]string{`[1,2]`: "an array", `"x"`: "a string", `12`: "a number", `true`: "a boolean", `null`: "null"} {
		var head struct {
			Kind string `json:"kind"`
		}
		err := Line{File: "in.jsonl", Num: 4, Data: []byte(in)}.Decode(&head)
		if in == "null" {
			// encoding/json leaves a struct unchanged for null: no error,
			// but DecodeStrict refuses it as any non-object.
			err = Line{File: "in.jsonl", Num: 4, Data: []byte(in)}.DecodeStrict(&head)
		}
		want := "in.jsonl:4: each line must hold one JSON object; this one is " + what
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
