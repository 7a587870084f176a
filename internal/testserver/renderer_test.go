package testserver

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// rendererCase is one line of a renderer's expectations
// (internal/serverprofile/testdata/*-expect.jsonl.gz, written by
// scripts/renderers/*-ref.py with the real library); the first line of a
// file is its header (the versions, and Harmony's date).
type rendererCase struct {
	Now     string                     `json:"now"`
	Tekken  string                     `json:"tekken"`
	Version string                     `json:"version"`
	Name    string                     `json:"name"`
	Body    map[string]json.RawMessage `json:"body"`
	Count   int                        `json:"count"`
	Error   string                     `json:"error"`
}

// rendererCases reads a renderer's expectations: its header, then the
// bodies the reference counted (those it refused left out) that keep
// returns true for.
func rendererCases(t *testing.T, file string, keep func(rendererCase) bool) (rendererCase, []rendererCase) {
	t.Helper()
	all := testutil.ReadJSONL[rendererCase](t, filepath.Join("..", "serverprofile", "testdata", file))
	var out []rendererCase
	for _, c := range all[1:] {
		if c.Error == "" && c.Body != nil && keep(c) {
			out = append(out, c)
		}
	}
	if len(out) < 100 {
		t.Fatalf("%s: %d bodies", file, len(out))
	}
	return all[0], out
}

// servesCounts asserts that s reports each case's reference count as its
// usage.prompt_tokens.
func servesCounts(t *testing.T, s *Server, cases []rendererCase, reference string) {
	t.Helper()
	for _, c := range cases {
		c.Body["max_tokens"] = json.RawMessage("1")
		body, err := json.Marshal(c.Body)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		postJSON(t, s.URL(), string(body), nil, &resp)
		if resp.Usage.PromptTokens != c.Count {
			t.Errorf("%s: prompt_tokens %d, %s %d", c.Name, resp.Usage.PromptTokens, reference, c.Count)
		}
	}
}

// TestHarmonyOverHTTP: the test server serving gpt-oss with Harmony
// reports, for every body of the Harmony corpus, the prompt_tokens the
// real openai_harmony renders (scripts/renderers/harmony-ref.py).
func TestHarmonyOverHTTP(t *testing.T) {
	header, cases := rendererCases(t, "harmony-expect.jsonl.gz", func(rendererCase) bool { return true })
	now, err := time.Parse("2006-01-02", header.Now)
	if err != nil {
		t.Fatal(err)
	}
	s := StartTest(t, Config{Model: testmodel.Source(t, "gptoss"), Now: now, Profile: serverprofile.VLLM, Renderer: serverprofile.RendererHarmony})
	servesCounts(t, s, cases, "openai_harmony")
}

// TestMistralOverHTTP: the test server serving a Mistral-format folder
// (mistral-common's tekken_240911 as tokenizer v7) reports vLLM's own
// MistralTokenizer count (scripts/renderers/mistral-ref.py) as
// prompt_tokens on every corpus body it does not refuse.
func TestMistralOverHTTP(t *testing.T) {
	_, cases := rendererCases(t, "mistral-expect.jsonl.gz", func(c rendererCase) bool { return c.Tekken == "tekken_240911" && c.Version == "v7" })
	src, err := modelsrc.Resolve(testutil.TekkenFolder(t, "tekken_240911", "v7"))
	if err != nil {
		t.Fatal(err)
	}
	servesCounts(t, StartTest(t, Config{Model: src, Profile: serverprofile.VLLM}), cases, "vLLM")
}

// TestDeepSeekV32OverHTTP: the test server serving a deepseek_v32 model
// (chosen by its config.json model_type) reports, for every rendered body
// of the DeepSeek-V3.2 corpus, the prompt_tokens of DeepSeek's encoder and
// the Python tokenizers package (scripts/renderers/deepseek-v32-ref.py).
func TestDeepSeekV32OverHTTP(t *testing.T) {
	_, cases := rendererCases(t, "deepseek-v32-expect.jsonl.gz", func(rendererCase) bool { return true })
	src, err := modelsrc.Resolve(testutil.DeepSeekV32Model(t))
	if err != nil {
		t.Fatal(err)
	}
	servesCounts(t, StartTest(t, Config{Model: src, Profile: serverprofile.VLLM}), cases, "the encoder")
}

// TestHarmonyResponsesOverHTTP: the test server serving gpt-oss with
// Harmony reports on /v1/responses, for every body of the Harmony
// Responses corpus, the input_tokens of vLLM's Responses path rendered by
// the real openai_harmony (harmony-ref.py --responses), and answers 400
// to the bodies vLLM refuses.
func TestHarmonyResponsesOverHTTP(t *testing.T) {
	all := testutil.ReadJSONL[rendererCase](t, filepath.Join("..", "serverprofile", "testdata", "harmony-responses-expect.jsonl.gz"))
	now, err := time.Parse("2006-01-02", all[0].Now)
	if err != nil {
		t.Fatal(err)
	}
	s := StartTest(t, Config{Model: testmodel.Source(t, "gptoss"), Now: now, Profile: serverprofile.VLLM, Renderer: serverprofile.RendererHarmony})
	served := 0
	for _, c := range all[1:] {
		c.Body["max_output_tokens"] = json.RawMessage("1")
		body, err := json.Marshal(c.Body)
		if err != nil {
			t.Fatal(err)
		}
		code, text := post(t, s, "/v1/responses", string(body), nil)
		if c.Error != "" {
			if code != 400 {
				t.Errorf("%s: vLLM refuses it (%s); status %d", c.Name, c.Error, code)
			}
			continue
		}
		var resp struct {
			Usage struct {
				InputTokens int `json:"input_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(text), &resp); err != nil || code != 200 {
			t.Errorf("%s: status %d %v: %s", c.Name, code, err, text)
			continue
		}
		served++
		if resp.Usage.InputTokens != c.Count {
			t.Errorf("%s: input_tokens %d, openai_harmony %d", c.Name, resp.Usage.InputTokens, c.Count)
		}
	}
	if served < 30 {
		t.Fatalf("%d Responses bodies served, want at least 30", served)
	}
}
