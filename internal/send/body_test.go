package send

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"testing"

	json "github.com/goccy/go-json"
)

// FuzzParseObject: --extra-body splits as encoding/json reads it: accepted
// exactly when it is one object without a repeated key, each field the
// compacted text of that key's value, in document order.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[1, 2],"c":{"d":null}}`, `{"\u0061":"x\ny"}`, `{"a":1,"a":2}`,
		`[]`, `{"a":1} x`, `{`, ` {"n": 1.50e3} `, `{"s":"\ud83d\ude00"}`, `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := parseObject(data)
		ref, refErr := referenceFields(data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%q: parseObject error %v, encoding/json %v", data, err, refErr)
		}
		if err != nil {
			return
		}
		if len(fields) != len(ref) {
			t.Fatalf("%q: %d fields, encoding/json %d", data, len(fields), len(ref))
		}
		for i := range ref {
			if fields[i].key != ref[i].key || !bytes.Equal(fields[i].val, ref[i].val) {
				t.Fatalf("%q field %d: %q=%s, encoding/json %q=%s", data, i, fields[i].key, fields[i].val, ref[i].key, ref[i].val)
			}
		}
	})
}

// referenceFields is the object's fields as encoding/json's token API reads
// them (send's former implementation), refusing a repeated key.
func referenceFields(data []byte) ([]field, error) {
	dec := stdjson.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(stdjson.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok || seen[key] {
			return nil, errNotObject
		}
		seen[key] = true
		var raw stdjson.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := stdjson.Compact(&c, raw); err != nil {
			return nil, err
		}
		out = append(out, field{key: key, val: c.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotObject // data after the object
	}
	return out, nil
}

var errNotObject = errors.New("not one JSON object")

// FuzzAppendString: appendString writes what json.Marshal (goccy, the
// bodies' encoder before it) writes for every string, and what
// encoding/json does.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\b\f\n\r\t\x00\x01\x1f\x7f", `<a href="x">&amp;</a>`, "\u2028\u2029", "a\xffb\xed\xa0\x80", "é\"\\/ 😀", "\xf0\x9f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString([]byte("x"), s)
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1:]) != string(want) {
			t.Fatalf("appendString(%q) = %s, goccy json.Marshal %s", s, got[1:], want)
		}
		std, _ := stdjson.Marshal(s)
		if string(got[1:]) != string(std) {
			t.Fatalf("appendString(%q) = %s, encoding/json %s", s, got[1:], std)
		}
	})
}

// TestAppendMessages: the messages of a multi-turn chat body are written
// as json.Marshal writes them, and any other shape is left to it.
func TestAppendMessages(t *testing.T) {
	msgs := []map[string]any{{"role": "system", "content": "<sys>"}, {"role": "user", "content": "[rid:1]\n\nhi & \"bye\""},
		{"role": "assistant", "content": "é\u2028"}, {"role": "user", "content": "\x01\xff"}}
	got, ok := appendMessages(nil, msgs)
	want, _ := json.Marshal(msgs)
	if !ok || string(got) != string(want) {
		t.Fatalf("appendMessages = %s, %v; json.Marshal %s", got, ok, want)
	}
	for _, odd := range [][]map[string]any{{{"role": "user", "content": []any{"x"}}}, {{"role": "user", "content": "x", "name": "n"}}, {{"content": "x"}}} {
		if _, ok := appendMessages(nil, odd); ok {
			t.Errorf("appendMessages(%v) took a shape it does not write", odd)
		}
	}
}
