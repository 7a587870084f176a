package jsonobj

import (
	"testing"

	json "github.com/goccy/go-json"
)

func TestRoundTripKeepsOrder(t *testing.T) {
	in := `{"z":1,"a":{"k":[1,2]},"m":"x\u2028y"}`
	obj, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	obj, _ = obj.Set("tokens", 7)
	obj, _ = obj.Set("z", "new")
	want := `{"z":"new","a":{"k":[1,2]},"m":"x\u2028y","tokens":7}`
	if got := string(obj.Marshal()); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestParseRejectsNonObjects(t *testing.T) {
	for _, in := range []string{``, `[1]`, `"s"`, `{"a":1} {"b":2}`, `{"a":}`, `{"a":1`, `{1:2}`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"text":"hi","n":[1,{"x":null}]}`, `{}`, `{"a":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		obj, err := Parse([]byte(s))
		if err != nil {
			return
		}
		out := obj.Marshal()
		if !json.Valid(out) {
			t.Fatalf("Marshal produced invalid JSON %q from %q", out, s)
		}
		again, err := Parse(out)
		if err != nil || len(again) != len(obj) {
			t.Fatalf("re-parse of %q: %v (%d vs %d members)", out, err, len(again), len(obj))
		}
	})
}

func TestAppendMember(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:           `{"a":1,"isl":{"n":2}}`,
		" { } \n":           `{"isl":{"n":2}}`,
		"{\"a\":\"<b>\"}\n": `{"a":"<b>","isl":{"n":2}}`,
	} {
		got, err := AppendMember([]byte(in), "isl", map[string]int{"n": 2})
		if err != nil || string(got) != want {
			t.Errorf("AppendMember(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}
