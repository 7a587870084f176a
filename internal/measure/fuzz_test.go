package measure

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"github.com/islkit/islkit/internal/jsonl"
)

var (
	fuzzOnce     sync.Once
	fuzzMeasurer *Measurer
)

// defaultMeasurer uses the embedded model, so fuzzing needs no reference tree.
func defaultMeasurer(t testing.TB) *Measurer {
	fuzzOnce.Do(func() {
		fuzzMeasurer = loadMeasurer(t, "", time.Time{}, Options{ApplyChatTemplate: true, IDs: true, Rendered: true})
	})
	return fuzzMeasurer
}

// FuzzRecord feeds every record shape measure reads (send records, OpenAI
// bodies, AIPerf raw records, inputs.json, messages and text records) and
// mutations of them: no panic, and every output line is a JSON object.
func FuzzRecord(f *testing.F) {
	for _, s := range []string{
		`{"text":"Hello world"}`,
		`{"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":false,"chat_template_kwargs":{"enable_thinking":true}}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}],"tools":[{"type":"function","function":{"name":"f"}}]}`,
		`{"kind":"islkit.request","schema_version":1,"turn":1,"target_isl":10,"marker":"[rid:abcdefabcdef]\n\n","payload":{"model":"m","messages":[{"role":"user","content":"[rid:abcdefabcdef]\n\nHi"}]},"result":{"usage":{"prompt_tokens":12}}}`,
		`{"metadata":{"turn_index":0},"payload":{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]},"responses":["data: {\"usage\":{\"prompt_tokens\":3}}"]}`,
		`{"data":[{"session_id":"x","payloads":[{"messages":[{"role":"user","content":"Hi"}]}]}]}`,
		`{"model":"m","prompt":["a","b"],"add_special_tokens":false}`,
		`{"kind":"islkit.request","schema_version":1,"turn":0,"target_isl":5,"marker":"","payload":{"model":"m","prompt":[[1,2],[3]]},"result":{"usage":{"prompt_tokens":3,"cached_tokens":0}}}`,
		`{"model":"m","instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
		`{"payload":{"model":"m","input":"hi"},"responses":["event: response.completed\ndata: {\"response\":{\"usage\":{\"input_tokens\":4,\"input_tokens_details\":{\"cached_tokens\":0}}}}"]}`,
		// usage unreadable: the isl member is added twice (counts, then
		// the error), here before a space (so not in place)
		`{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c","turn":0,"target_isl":3,"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},"result":{"usage":{"prompt_tokens":"x"}} }`,
		`{"kind":"islkit.request","schema_version":1,"turn":0,"payload":{"model":"m","messages":[]}} `,
	} {
		f.Add([]byte(s))
	}
	m := defaultMeasurer(f)
	f.Fuzz(func(t *testing.T, rec []byte) {
		res, err := m.Record(rec)
		for _, out := range res.Lines {
			if !json.Valid(out) || !bytes.HasPrefix(out, []byte("{")) || bytes.Contains(out, []byte("\n")) {
				t.Fatalf("output line is not a one-line JSON object: %q", out)
			}
		}
		// Line writes over its line where it has room: the same output.
		line := append(make([]byte, 0, len(rec)+4096), rec...)
		lres, lerr := m.Line(jsonl.Line{File: "f", Num: 1, Data: line})
		if utf8.Valid(rec) && (fmt.Sprint(lres.Lines) != fmt.Sprint(res.Lines) || (lerr == nil) != (err == nil)) {
			t.Fatalf("Line gives %q, %v; Record %q, %v", lres.Lines, lerr, res.Lines, err)
		}
	})
}
