package serverprofile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
)

// dsv32Expect is one body of testdata/deepseek-v32-expect.jsonl.gz, written
// by scripts/renderers/deepseek-v32-ref.py: the prompt DeepSeek's
// encoding_dsv32.py renders for it (as vLLM calls it) and the ids the
// Python tokenizers package encodes it into, or the error it raises.
type dsv32Expect struct {
	Name  string          `json:"name"`
	Body  json.RawMessage `json:"body"`
	Text  string          `json:"text"`
	Count int             `json:"count"`
	IDs   []int           `json:"ids"`
	Error string          `json:"error"`
}

func readDSV32Expect(t *testing.T) []dsv32Expect {
	return readExpect[dsv32Expect](t, "deepseek-v32-expect.jsonl.gz")
}

// readExpect reads an expectation file of testdata: a header line (the
// sources and versions it was made with), then one case a line.
func readExpect[T any](t testing.TB, name string) []T {
	t.Helper()
	all := testutil.ReadJSONL[T](t, filepath.Join("testdata", name))
	if len(all) < 2 {
		t.Fatalf("%s: want a header line, then the cases", name)
	}
	return all[1:]
}

// dsv32Model loads the V3.2 stand-in and marks its template as a
// deepseek_v32 model's, as model.Load marks it from its config.json.
func dsv32Model(t *testing.T) (model, *chat.Template) {
	t.Helper()
	src, err := modelsrc.Resolve(testutil.DeepSeekV32Model(t))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	tmpl.ModelType = "deepseek_v32"
	return model{tmpl, tok}, tmpl
}

// TestDeepSeekV32MatchesEncoder: vLLM's prompt, count and token ids of
// every corpus body equal those of DeepSeek's encoding_dsv32.py and the
// Python tokenizers package; a body the encoder raises on is refused.
func TestDeepSeekV32MatchesEncoder(t *testing.T) {
	cases := readDSV32Expect(t)
	rendered := 0
	for _, c := range cases {
		if c.Error == "" {
			rendered++
		}
	}
	if rendered < 100 {
		t.Fatalf("%d rendered bodies in the corpus, want at least 100", rendered)
	}
	m, tmpl := dsv32Model(t)
	for _, c := range cases {
		ex, err := extract.Body(c.Body)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pr, err := Render(VLLM, ex, tmpl, time.Time{}, nil)
		if c.Error != "" {
			if err == nil {
				t.Errorf("%s: rendered, the encoder raises %s", c.Name, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if string(pr.Text) != c.Text {
			t.Errorf("%s: text differs\n go:  %q\n ref: %q", c.Name, pr.Text, c.Text)
			continue
		}
		if n := pr.Count(m.tok); n != c.Count {
			t.Errorf("%s: count %d, reference %d", c.Name, n, c.Count)
		}
		if ids := pr.IDs(m.tok); !slices.Equal(ids, c.IDs) {
			t.Errorf("%s: ids differ", c.Name)
		}
	}
}

// TestDeepSeekV32ChosenByModelType: under vLLM and SGLang a deepseek_v32
// model is rendered by its encoder (each server's variant); other model
// types use the template; --renderer deepseek_v32 is accepted.
func TestDeepSeekV32ChosenByModelType(t *testing.T) {
	_, tmpl := dsv32Model(t)
	if got := RendererOf(VLLM, tmpl); got != RendererDeepSeekV32 {
		t.Errorf("vllm, deepseek_v32: %s", got)
	}
	if got := RendererOf(SGLang, tmpl); got != RendererDeepSeekV32 {
		t.Errorf("sglang, deepseek_v32: %s", got)
	}
	if got := RendererOf(Transformers, tmpl); got != RendererJinja {
		t.Errorf("transformers, deepseek_v32: %s", got)
	}
	if got := RendererOf(VLLM, loadModel(t, "deepseek_v3").tmpl); got != RendererJinja {
		t.Errorf("vllm, no model type: %s", got)
	}
	if r, err := ParseRenderer("deepseek_v32"); err != nil || r != RendererDeepSeekV32 {
		t.Errorf("ParseRenderer(deepseek_v32): %q, %v", r, err)
	}
}

// TestDeepSeekV32BadInput: malformed bodies fail naming the field.
func TestDeepSeekV32BadInput(t *testing.T) {
	_, tmpl := dsv32Model(t)
	for body, want := range map[string]string{
		`{"messages":[1]}`:                           "messages[0]",
		`{"messages":[{"role":"user","content":5}]}`: "messages[0].content",
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`:             "messages[0].content",
		`{"messages":[{"role":"assistant","reasoning":7}]}`:                                                   "messages[0].reasoning",
		`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{}}}]}]}`:         "messages[0].tool_calls[0]",
		`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":1,"arguments":"{}"}}]}]}`:         "messages[0].tool_calls[0]",
		`{"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":3}`:                               "chat_template_kwargs",
		`{"messages":[{"role":"user","content":"x"}],"tools":[]}`:                                             "tools",
		`{"messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f","parameters":1e999}}]}`: "tools[0].function.parameters",
		`{"messages":[]}`: "messages",
	} {
		ex, err := extract.Body([]byte(body))
		if err != nil {
			continue // refused before rendering: fine
		}
		_, err = Render(VLLM, ex, tmpl, time.Time{}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", body, err, want)
		}
	}
}
