package jsonl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

type color string

func (c *color) UnmarshalText(b []byte) error {
	if s := string(b); s == "red" || s == "blue" {
		*c = color(s)
		return nil
	}
	return fmt.Errorf("invalid color %q (valid: red, blue)", b)
}

type turn struct {
	Text string `json:"text"`
	ISL  int    `json:"isl"`
}

type record struct {
	ID     string          `json:"id"`
	Turns  []turn          `json:"turns"`
	Meta   map[string]turn `json:"meta"`
	Color  color           `json:"color"`
	Colors []color         `json:"colors"`
	Shade  *shade          `json:"shade"`
}

type shade struct {
	Color color `json:"color"`
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"id":5}`, `in.jsonl:4: field "id": cannot unmarshal number into string`},
		{`{"turns":[{"isl":1},{"isl":"ten"}]}`, `in.jsonl:4: field "turns.1.isl": cannot unmarshal string into int`},
		{`{"turns":[{"isl":1.5}]}`, `in.jsonl:4: field "turns.0.isl": cannot unmarshal number 1.5 into int`},
		{`{"meta":{"k":{"text":true}}}`, `in.jsonl:4: field "meta.k.text": cannot unmarshal bool into string`},
		// go-json passes an UnmarshalText error through without its path;
		// Decode finds the member that fails.
		{`{"color":"green"}`, `in.jsonl:4: field "color": invalid color "green" (valid: red, blue)`},
		{`{"id":"x","colors":["red","pink"]}`, `in.jsonl:4: field "colors.1": invalid color "pink" (valid: red, blue)`},
		{`{"turns":[{"text":"a"}],"Shade":{"color":"teal"}}`, `in.jsonl:4: field "Shade.color": invalid color "teal" (valid: red, blue)`},
		{`{"id":"a",`, `in.jsonl:4: invalid JSON at byte offset 10: unexpected end of JSON input`},
		{`[1,2]`, `in.jsonl:4: each line must hold one JSON object; this one is an array`},
	}
	for _, tt := range tests {
		var r record
		err := Line{File: "in.jsonl", Num: 4, Data: []byte(tt.in)}.Decode(&r)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%s)\n got  %v\n want %s", tt.in, err, tt.want)
		}
		var le *LineError
		if !errors.As(err, &le) || le.File != "in.jsonl" || le.Line != 4 {
			t.Errorf("Decode(%s): not a *LineError for in.jsonl:4: %#v", tt.in, err)
		}
	}
}

func TestDecodeKeepsCauseChain(t *testing.T) {
	var r record
	err := Line{File: "f", Num: 1, Data: []byte(`{"turns":[{"isl":"x"}]}`)}.Decode(&r)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "turns.0.isl" {
		t.Fatalf("errors.As UnmarshalTypeError: %v", err)
	}
}

func TestDecodeOK(t *testing.T) {
	var r record
	l := Line{File: "f", Num: 1, Data: []byte(`{"id":"a\u2028b","turns":[{"text":"hi","isl":3}],"color":"red","extra":1}`)}
	if err := l.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "a\u2028b" || len(r.Turns) != 1 || r.Turns[0].ISL != 3 || r.Color != "red" {
		t.Fatalf("decoded %+v", r)
	}
}

func TestDecodeStrict(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"id":"a","isl_tokens":3}`, `s.jsonl:9: field "isl_tokens": unknown field`},
		// 10 bytes of value, one space, then the second value at offset 11.
		{`{"id":"a"} {"id":"b"}`, `s.jsonl:9: unexpected data after the JSON value at byte offset 11`},
		{`{"id":"a",`, `s.jsonl:9: invalid JSON at byte offset 10: unexpected end of JSON input`},
		{`{"turns":[{"isl":"x"}]}`, `s.jsonl:9: field "turns.0.isl": cannot unmarshal string into int`},
	}
	for _, tt := range tests {
		var r record
		err := Line{File: "s.jsonl", Num: 9, Data: []byte(tt.in)}.DecodeStrict(&r)
		if err == nil || err.Error() != tt.want {
			t.Errorf("DecodeStrict(%s)\n got  %v\n want %s", tt.in, err, tt.want)
		}
	}
	var r record
	if err := (Line{File: "s", Num: 1, Data: []byte(`{"id":"a"}  `)}).DecodeStrict(&r); err != nil || r.ID != "a" {
		t.Fatalf("strict ok: %v %+v", err, r)
	}
}

func TestLineErrorf(t *testing.T) {
	l := Line{File: "c.jsonl", Num: 12}
	if got, want := l.Errorf("isl must be positive, got %d", -3).Error(), "c.jsonl:12: isl must be positive, got -3"; got != want {
		t.Errorf("Errorf = %q, want %q", got, want)
	}
	if got, want := l.FieldErrorf("turns.0.isl", "must be positive, got %d", 0).Error(), `c.jsonl:12: field "turns.0.isl": must be positive, got 0`; got != want {
		t.Errorf("FieldErrorf = %q, want %q", got, want)
	}
	if !strings.HasPrefix((&LineError{File: "<stdin>", Line: 1, Err: errors.New("x")}).Error(), "<stdin>:1: x") {
		t.Error("stdin name")
	}
}
