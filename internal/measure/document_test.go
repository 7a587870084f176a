package measure

import (
	"io"
	"strings"
	"testing"
)

func TestReadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"jsonl", "{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n{\"b\":2}\n"},
		{"pretty document", "{\n  \"data\": [\n    {\"x\": 1}\n  ]\n}\n", "{\"data\":[{\"x\":1}]}\n"},
		// A broken first line must not swallow the lines after it.
		{"broken first line", "{\"text\": \"trunc\n{\"text\":\"ok\"}\n", "{\"text\": \"trunc\n{\"text\":\"ok\"}\n"},
		{"not json", "hello\n", "hello\n"},
	} {
		r, err := ReadInput(strings.NewReader(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(r)
		if string(got) != tc.want {
			t.Errorf("%s: read %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := ReadInput(strings.NewReader("[\n1,\n2]\n")); err == nil || !strings.Contains(err.Error(), "array") {
		t.Errorf("pretty array: err %v, want the inputs.json hint", err)
	}
}
