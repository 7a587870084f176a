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
