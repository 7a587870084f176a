package measure

import (
	"io"
	"strings"
	"testing"
	"time"
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

// TestReadInputDecidesOnFirstLine: a live `send | measure` writes a few
// short records and waits; measure must tell JSONL from a document on the
// first line, not wait for 64 KiB or the end of the input (issue 27,
// item 6). The pipe stays open: ReadInput must return all the same, and
// the lines come through unchanged.
func TestReadInputDecidesOnFirstLine(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	type result struct {
		r   io.Reader
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := ReadInput(pr)
		done <- result{r, err}
	}()
	// Written in pieces, as a slow producer would: the first line's end
	// arrives in a later write than its start. io.Pipe is synchronous, so
	// the writer runs on its own and the last piece waits for a reader.
	go func() {
		for _, piece := range []string{"\n  ", `{"text":"Hel`, "lo\"}\n", `{"text":"b"}` + "\n"} {
			pw.Write([]byte(piece))
		}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ReadInput still waiting with two whole lines in and the pipe open")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	want := "\n  {\"text\":\"Hello\"}\n{\"text\":\"b\"}\n"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(res.r, got); err != nil || string(got) != want {
		t.Errorf("read %q (%v), want %q", got, err, want)
	}
}
