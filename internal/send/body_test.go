package send

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"testing"
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
