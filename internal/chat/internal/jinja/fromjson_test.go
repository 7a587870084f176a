package jinja

import (
	"encoding/json"
	"testing"
)

// FuzzFromJSON checks the hand-written decoder against encoding/json on
// strings (escapes, surrogates, invalid UTF-8) and numbers.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`"a\nb\u00e9\ud83d\ude00\ud800x\/\\"`, `{"b":1,"a":[1.5,-2e3,true,null,"x"]}`, "\"\xff\"", `"\udc00\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := FromJSON(data)
		var want any
		if json.Unmarshal(data, &want) != nil {
			if err == nil {
				t.Fatalf("FromJSON accepted invalid JSON %q", data)
			}
			return
		}
		if err != nil {
			return // e.g. an integer beyond int64, which Python would keep
		}
		if s, ok := want.(string); ok && v.AsString() != s {
			t.Fatalf("FromJSON(%q) = %q, encoding/json %q", data, v.AsString(), s)
		}
	})
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
