package testserver

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestGoldenWire checks prompt accounting under the transformers profile
// against the real transformers + tokenizers counts, directly and over
// HTTP.
func TestGoldenWire(t *testing.T) {
	shared := testutil.RefDir(t)
	files, _ := filepath.Glob(filepath.Join(shared, "golden", "wire", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no golden wire files")
	}
	total, overHTTP := 0, 0
	for _, path := range files {
		model := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		s := StartTest(t, Config{Model: testmodel.Source(t, model), Now: testutil.WireNow, Profile: serverprofile.Transformers})
		for _, c := range testutil.ReadJSONL[testutil.WireCase](t, path) {
			total++
			got, err := s.CountPrompt(c.Messages, c.Tools, nil, c.Generation())
			if err != nil {
				t.Errorf("%s/%s: %v", model, c.Case, err)
				continue
			}
			if got != c.Tokens {
				t.Errorf("%s/%s: CountPrompt = %d, golden %d", model, c.Case, got, c.Tokens)
			}
			if !c.Generation() {
				continue
			}
			body := `{"model":"m","messages":` + string(c.Messages) + `,"max_tokens":1`
			if c.HasTools() {
				body += `,"tools":` + string(c.Tools)
			}
			body += "}"
			var resp struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			}
			postJSON(t, s.URL(), body, nil, &resp)
			if resp.Usage.PromptTokens != c.Tokens {
				t.Errorf("%s/%s over HTTP: prompt_tokens = %d, golden %d", model, c.Case, resp.Usage.PromptTokens, c.Tokens)
			}
			overHTTP++
		}
	}
	t.Logf("%d golden cases, %d over HTTP", total, overHTTP)
	if total < 290 {
		t.Errorf("only %d golden cases read", total)
	}
}

// TestProfilesOverHTTP: the server counts tricky bodies as the profile's
// server does, checked against the independent reference of
// internal/serverprofile (scripts/serverprofile-ref.sh), and refuses what
// that server refuses with a 400 naming the rule.
func TestProfilesOverHTTP(t *testing.T) {
	shared := testutil.RefDir(t)
	td := filepath.Join("..", "serverprofile", "testdata")
	bodies := map[string]string{}
	for _, c := range testutil.ReadJSONL[struct {
		Case string          `json:"case"`
		Body json.RawMessage `json:"body"`
	}](t, filepath.Join(td, "cases.jsonl")) {
		bodies[c.Case] = string(c.Body)
	}
	servers := map[string]*Server{}
	checked := map[string]int{}
	for _, w := range testutil.ReadJSONL[struct {
		Case, Model, Profile, Outcome string
		Tokens                        int
	}](t, filepath.Join(td, "expected.jsonl.gz")) {
		if w.Model != "qwen3" && w.Model != "llama3_1" {
			continue
		}
		s := servers[w.Model+w.Profile]
		if s == nil {
			src, err := modelsrc.Resolve(filepath.Join(shared, "models", w.Model))
			if err != nil {
				t.Fatal(err)
			}
			s = StartTest(t, Config{Model: src, Now: testutil.WireNow, Profile: serverprofile.Profile(w.Profile)})
			servers[w.Model+w.Profile] = s
		}
		var resp struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		r, _ := postJSON(t, s.URL(), bodies[w.Case], nil, &resp)
		name := w.Model + "/" + w.Profile + "/" + w.Case
		switch w.Outcome {
		case "tokens":
			if r.StatusCode != http.StatusOK || resp.Usage.PromptTokens != w.Tokens {
				t.Errorf("%s: HTTP %d, prompt_tokens %d (%s); reference %d", name, r.StatusCode, resp.Usage.PromptTokens, resp.Error.Message, w.Tokens)
			}
		case "refused":
			if r.StatusCode != http.StatusBadRequest || !strings.Contains(resp.Error.Message, "would refuse this request") {
				t.Errorf("%s: HTTP %d %q; want a 400 naming the rule", name, r.StatusCode, resp.Error.Message)
			}
		default:
			if r.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: HTTP %d; want 400 for a template error", name, r.StatusCode)
			}
		}
		checked[w.Outcome]++
	}
	if checked["tokens"] < 150 || checked["refused"] < 10 {
		t.Errorf("checked %v", checked)
	}
}

// postJSON posts body and returns the response and its body, decoded into
// out when out is not nil.
func postJSON(t *testing.T, base, body string, header map[string]string, out any) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if out != nil {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("%v: %s", err, buf.String())
		}
	}
	return resp, buf.String()
}

func TestLengthRules(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true, NaturalLength: 5})
	cases := []struct {
		extra  string
		tokens int
		finish string
	}{
		{`"max_tokens":3`, 3, "length"},
		{`"max_tokens":9`, 5, "stop"},                     // natural EOS first
		{`"max_tokens":9,"ignore_eos":true`, 9, "length"}, // runs to the limit
		{`"max_tokens":9,"min_tokens":7`, 7, "stop"},
		{`"max_completion_tokens":4`, 4, "length"},
	}
	for _, c := range cases {
		var resp struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct{ Content string }
			}
			Usage struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		postJSON(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}],`+c.extra+`}`, nil, &resp)
		if resp.Usage.CompletionTokens != c.tokens || resp.Choices[0].FinishReason != c.finish || resp.Usage.PromptTokens != 0 {
			t.Errorf("%s: got %d tokens %q, prompt %d; want %d %q, 0", c.extra, resp.Usage.CompletionTokens,
				resp.Choices[0].FinishReason, resp.Usage.PromptTokens, c.tokens, c.finish)
		}
	}
}

func TestStreamShape(t *testing.T) {
	s := StartTest(t, Config{})
	_, body := postJSON(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"Hello, how are you?"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`, nil, nil)
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	// role chunk, 3 tokens, finish chunk, usage chunk, [DONE]
	if len(events) != 7 || events[6] != "data: [DONE]" {
		t.Fatalf("got %d events:\n%s", len(events), body)
	}
	// Qwen3 golden: "Hello, how are you?" with the generation prompt is 14.
	if !strings.Contains(events[5], `"usage":{"completion_tokens":3,"prompt_tokens":14,`) {
		t.Errorf("usage chunk: %s", events[5])
	}
}

func TestFaultHeader(t *testing.T) {
	s := StartTest(t, Config{NoTokenize: true})
	for _, c := range []struct {
		fault  string
		status int
	}{{Fault500, 500}, {Fault429, 429}, {"50O", 400}} { // a typo is refused, not ignored
		resp, _ := postJSON(t, s.URL(), `{"model":"m","messages":[{"role":"user","content":"x"}]}`, map[string]string{FaultHeader: c.fault}, nil)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d", c.fault, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", s.URL()+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set(FaultHeader, FaultReset)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("reset: request succeeded")
	}
	if got := s.Faults(); len(got) != 3 || got[Fault500] != 1 || got[Fault429] != 1 || got[FaultReset] != 1 || s.Requests() != 4 {
		t.Errorf("faults %v, requests %d", got, s.Requests())
	}
}
