package chat

import "testing"

// TestPyDumps: the texts are Python 3's json.dumps(json.loads(in),
// ensure_ascii=False).
func TestPyDumps(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"b":[1.0,2e3,"é\n"],"a":2}`, `{"a": 2, "b": [1.0, 2000.0, "é\n"]}`},
		{`{"x":null,"y":true,"z":{}}`, `{"x": null, "y": true, "z": {}}`},
		{`"\u2028<>&'"`, "\"\u2028<>&'\""},
	} {
		got, err := PyDumps([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}
