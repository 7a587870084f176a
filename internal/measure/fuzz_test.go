package measure

import (
	"bytes"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
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
	} {
		f.Add([]byte(s))
	}
	m := defaultMeasurer(f)
	f.Fuzz(func(t *testing.T, rec []byte) {
		res, _ := m.Record(rec)
		for _, out := range res.Lines {
			if !json.Valid(out) || !bytes.HasPrefix(out, []byte("{")) || bytes.Contains(out, []byte("\n")) {
				t.Fatalf("output line is not a one-line JSON object: %q", out)
			}
		}
	})
}
