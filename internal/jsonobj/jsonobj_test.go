package jsonobj

import (
	"bytes"
	stdjson "encoding/json"
	"strings"
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

// AppendMemberInPlace gives AppendMember's text. On a line that ends with
// its brace and has room after it, it writes there (no copy) and keeps
// the bytes before the brace, so that a second call replaces the first
// member; on any other line it leaves the line alone.
func TestAppendMemberInPlace(t *testing.T) {
	for _, c := range []struct {
		in, want string
		inPlace  bool
	}{
		{`{"a":1}`, `{"a":1,"isl":{"n":2}}`, true},
		{` {"a":1}`, `{"a":1,"isl":{"n":2}}`, true},
		{`{}`, `{"isl":{"n":2}}`, true},
		{" { } \n", `{"isl":{"n":2}}`, false},
		{`{"a":1} `, `{"a":1,"isl":{"n":2}}`, false},
		{`{"a":"<b>" }`, `{"a":"<b>","isl":{"n":2}}`, false},
	} {
		for _, room := range []int{64, 0} {
			data := append(make([]byte, 0, len(c.in)+room), c.in...)
			got, err := AppendMemberInPlace(data, "isl", map[string]int{"n": 2})
			if err != nil || string(got) != c.want {
				t.Fatalf("AppendMemberInPlace(%q) = %s, %v; want %s", c.in, got, err, c.want)
			}
			written := &got[0] == &bytes.TrimLeft(data, " ")[0]
			if written != (c.inPlace && room > 0) {
				t.Errorf("AppendMemberInPlace(%q) with room %d: written in place %v", c.in, room, written)
			}
			if !written && string(data) != c.in {
				t.Errorf("AppendMemberInPlace(%q) copied, and changed the line to %q", c.in, data)
			}
			again, err := AppendMemberInPlace(data, "isl", map[string]int{"n": 3})
			if want := strings.Replace(c.want, `"n":2`, `"n":3`, 1); err != nil || string(again) != want {
				t.Errorf("second AppendMemberInPlace(%q) = %s, %v; want %s", c.in, again, err, want)
			}
		}
	}
}

// String and AppendString must decode every valid JSON string as
// encoding/json does, whichever path (slice, own unescape, go-json) they
// take.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\"c\\d\/e\u00e9\u2028"`, `"\ud83d\ude00"`, `"\ud800x"`, "\"bad \xff utf8\"", `"\u0000"`, `"tab\tx"`, `"\u12"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if stdjson.Unmarshal(raw, &want) != nil {
			return // String's input is valid JSON
		}
		got, err := String(raw)
		if err != nil || got != want {
			t.Fatalf("String(%q) = %q, %v; encoding/json says %q", raw, got, err, want)
		}
		appended, err := AppendString([]byte("x\\y"), raw)
		if err != nil || string(appended) != "x\\y"+want {
			t.Fatalf("AppendString(x\\y, %q) = %q, %v; encoding/json says x\\y%q", raw, appended, err, want)
		}
	})
}

// Elements and Members must split valid JSON as encoding/json does.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{`[1, "a,]", {"k": [2, {}]}, null, true]`, `[]`, ` [ "x\"]" ] `, `{"a":1,"b":[1,2],"a":"x\"}"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var elems []stdjson.RawMessage
		if stdjson.Unmarshal(raw, &elems) == nil && elems != nil {
			got, err := Elements(raw)
			if err != nil || len(got) != len(elems) {
				t.Fatalf("Elements(%q) = %d elements, %v; want %d", raw, len(got), err, len(elems))
			}
			for i := range elems {
				if string(got[i]) != string(bytes.TrimSpace(elems[i])) {
					t.Fatalf("Elements(%q)[%d] = %q, want %q", raw, i, got[i], elems[i])
				}
			}
		}
		var members map[string]stdjson.RawMessage
		if stdjson.Unmarshal(raw, &members) == nil && members != nil {
			obj, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%q): %v", raw, err)
			}
			for k, v := range members {
				got, ok := obj.Get(k)
				if !ok || string(got) != string(bytes.TrimSpace(v)) {
					t.Fatalf("Parse(%q)[%q] = %q, want %q", raw, k, got, v)
				}
			}
		}
	})
}

// TestSmallObjectsAllocs: an object is split into a slice of its own
// length (one allocation, not room for 16 members), and the keys and
// type values of content parts are not allocated: a payload log splits
// several small objects per request (content parts, image_url).
func TestSmallObjectsAllocs(t *testing.T) {
	part := []byte(`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}`)
	obj, err := Members(part)
	if err != nil || len(obj) != 2 || cap(obj) != 2 || obj[1].Key != "image_url" {
		t.Fatalf("%v %v (cap %d)", obj, err, cap(obj))
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Members(part) }); n != 1 {
		t.Errorf("Members: %v allocations, want 1", n)
	}
	for _, s := range []string{`"image_url"`, `"user"`, `"text"`} {
		raw := []byte(s)
		if n := testing.AllocsPerRun(100, func() { _, _ = String(raw) }); n != 0 {
			t.Errorf("String(%s): %v allocations, want 0", s, n)
		}
	}
}
