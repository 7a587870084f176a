package jinja

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// FuzzFromJSON checks FromJSON against encoding/json's token API, the
// whole structure: key order (a repeated key keeps its first place and its
// last value, as Python's json), ints distinct from floats, strings with
// escapes, surrogates and invalid UTF-8.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`"a\nb\u00e9\ud83d\ude00\ud800x\/\\"`, `{"b":1,"a":[1.5,-2e3,true,null,"x"]}`, "\"\xff\"", `"\udc00\u0041"`,
		` {"z": {"y": [], "x": {}}, "z": [ 1 , 2 ], "\u0061": -0.0} `, `[[["deep"]], 9223372036854775807]`, `12345678901234567890`, `1E400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := FromJSON(data)
		want, refErr := referenceJSON(data)
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("FromJSON accepted invalid JSON %q", data)
			}
			return
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("FromJSON(%q): error %v, reference %v", data, err, refErr)
		}
		if err == nil && describe(v) != want {
			t.Fatalf("FromJSON(%q) = %s\nreference      %s", data, describe(v), want)
		}
	})
}

// describe writes v in one canonical notation that referenceJSON writes too.
func describe(v Value) string {
	switch {
	case v.IsDict():
		var sb strings.Builder
		sb.WriteByte('{')
		for _, e := range v.AsDict().Entries() {
			sb.WriteString(strconv.Quote(e.Key) + ":" + describe(e.Value) + ",")
		}
		return sb.String() + "}"
	case v.IsList():
		var sb strings.Builder
		sb.WriteByte('[')
		for _, e := range v.AsList().Items {
			sb.WriteString(describe(e) + ",")
		}
		return sb.String() + "]"
	case v.IsString():
		return strconv.Quote(v.AsString())
	case v.IsInt():
		return "i" + strconv.FormatInt(v.AsInt(), 10)
	case v.IsFloat():
		return "f" + strconv.FormatFloat(v.AsFloat(), 'g', -1, 64)
	case v.IsBool():
		return strconv.FormatBool(v.AsBool())
	case v.IsNone():
		return "none"
	}
	return "?"
}

// referenceJSON describes a document as encoding/json's token API reads
// it; numbers that do not fit an int64 or a float64 are errors, as in
// FromJSON.
func referenceJSON(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() (string, error)
	value = func() (string, error) {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '[' {
				s := "["
				for dec.More() {
					e, err := value()
					if err != nil {
						return "", err
					}
					s += e + ","
				}
				_, err := dec.Token()
				return s + "]", err
			}
			var keys []string
			vals := map[string]string{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", err
				}
				e, err := value()
				if err != nil {
					return "", err
				}
				key := k.(string)
				if _, dup := vals[key]; !dup {
					keys = append(keys, key)
				}
				vals[key] = e
			}
			s := "{"
			for _, k := range keys {
				s += strconv.Quote(k) + ":" + vals[k] + ","
			}
			_, err := dec.Token()
			return s + "}", err
		case string:
			return strconv.Quote(tok), nil
		case json.Number:
			if !strings.ContainsAny(string(tok), ".eE") {
				n, err := tok.Int64()
				return "i" + strconv.FormatInt(n, 10), err
			}
			f, err := tok.Float64()
			return "f" + strconv.FormatFloat(f, 'g', -1, 64), err
		case bool:
			return strconv.FormatBool(tok), nil
		case nil:
			return "none", nil
		}
		return "", fmt.Errorf("token %v", tok)
	}
	return value()
}

// TestAddChain checks that a + b + c ... keeps pairwise semantics while
// strings are concatenated in one go.
func TestAddChain(t *testing.T) {
	for src, want := range map[string]string{
		`{{ 'a' + 'b' + 'c' + 'd' }}`:          "abcd",
		`{{ 1 + 2 + 3 }}`:                      "6",
		`{{ [1] + [2] + [3] }}`:                "[1, 2, 3]",
		`{{ 'x' + ('y' + 'z') + 'w' }}`:        "xyzw",
		`{{ (1 + 2) ~ 'a' + 'b' + 'c' }}`:      "3abc",
		`{% set s = 'p' %}{{ s + s + s + s }}`: "pppp",
	} {
		tmpl, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := tmpl.RenderValues(map[string]Value{}, Limits{})
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", src, got, err, want)
		}
	}
	for _, src := range []string{`{{ 'a' + 'b' + 1 }}`, `{{ 1 + 'a' + 'b' }}`, `{{ 'a' + 'b' + [1] + 'c' }}`} {
		tmpl, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tmpl.RenderValues(map[string]Value{}, Limits{}); err == nil {
			t.Errorf("%s = %q, want a TypeError as in Python", src, got)
		}
	}
}

// benchBody is a chat request of the shape measure and the test server
// decode: a few long messages (one with escapes) and tool definitions.
func benchBody() []byte {
	text := strings.Repeat("The whale, the whale! Call me Ishmael. ", 100)
	var tools []any
	for i := range 5 {
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
			"name": fmt.Sprintf("tool_%d", i), "description": "Looks something up.",
			"parameters": map[string]any{"type": "object", "required": []string{"q"},
				"properties": map[string]any{"q": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer", "default": 3}}}}})
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 100, "tools": tools, "messages": []any{
		map[string]any{"role": "system", "content": text},
		map[string]any{"role": "user", "content": "\"quoted\"\n\t" + text + " é 😀"},
		map[string]any{"role": "assistant", "content": text},
		map[string]any{"role": "user", "content": text},
	}})
	return body
}

func BenchmarkFromJSON(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := FromJSON(body); err != nil {
			b.Fatal(err)
		}
	}
}
