package serverprofile

import (
	"path/filepath"
	"sync"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
)

// referenceCase is one line of testdata/cases.jsonl.
type referenceCase struct {
	Case string          `json:"case"`
	Body json.RawMessage `json:"body"`
}

// referenceResult is one line of testdata/expected.jsonl.gz, written by
// scripts/serverprofile-ref.sh: an independent Python + Jinja2
// implementation of docs/reference/server-preprocessing.md, counted by
// the Rust tokenizers.
type referenceResult struct {
	Case    string `json:"case"`
	Model   string `json:"model"`
	Profile string `json:"profile"`
	Outcome string `json:"outcome"` // tokens, refused, render_error
	Tokens  int    `json:"tokens"`
	Reason  string `json:"reason"`
}

type model struct {
	tmpl *chat.Template
	tok  *tokenizer.Tokenizer
}

var (
	modelsMu sync.Mutex
	models   = map[string]model{}
)

func loadModel(t *testing.T, name string) model {
	t.Helper()
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if m, ok := models[name]; ok {
		return m
	}
	src, err := modelsrc.Resolve(filepath.Join(testutil.RefDir(t), "models", name))
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
	models[name] = model{tmpl, tok}
	return models[name]
}

// TestReference checks every tricky body of testdata/cases.jsonl (tool
// calls with string, dict, invalid and empty arguments, null and absent
// content, multi-part system, user and tool content, reasoning fields,
// continue_final_message, kwargs against request fields, tools and
// tool_choice, refusals) under each profile and the Qwen3, Llama-3.1,
// DeepSeek-V3, gpt-oss and Mistral templates against the reference's
// count, refusal or template error.
func TestReference(t *testing.T) {
	cases := map[string]json.RawMessage{}
	for _, c := range testutil.ReadJSONL[referenceCase](t, filepath.Join("testdata", "cases.jsonl")) {
		cases[c.Case] = c.Body
	}
	want := testutil.ReadJSONL[referenceResult](t, filepath.Join("testdata", "expected.jsonl.gz"))
	if len(want) != len(cases)*5*4 {
		t.Fatalf("%d expected results for %d cases, want 5 models × 4 profiles each", len(want), len(cases))
	}
	outcomes := map[string]int{}
	for _, w := range want {
		outcomes[w.Outcome]++
		body, ok := cases[w.Case]
		if !ok {
			t.Fatalf("expected result for unknown case %q", w.Case)
		}
		m := loadModel(t, w.Model)
		ex, err := extract.Body(body)
		if err != nil {
			t.Fatalf("%s: %v", w.Case, err)
		}
		got, err := CountBody(RulesOf(Profile(w.Profile)), ex, m.tmpl, m.tok, testutil.WireNow)
		name := w.Model + "/" + w.Profile + "/" + w.Case
		switch w.Outcome {
		case "tokens":
			if err != nil || got != w.Tokens {
				t.Errorf("%s: got %d, %v; want %d tokens", name, got, err, w.Tokens)
			}
		case "refused":
			if !IsRefusal(err) {
				t.Errorf("%s: got %d, %v; want a refusal (%s)", name, got, err, w.Reason)
			}
		case "render_error":
			if err == nil || IsRefusal(err) {
				t.Errorf("%s: got %d, %v; want a template error (%s)", name, got, err, w.Reason)
			}
		default:
			t.Fatalf("%s: unknown outcome %q", name, w.Outcome)
		}
	}
	// The file must exercise all three outcomes, so that it can fail.
	if outcomes["tokens"] < 400 || outcomes["refused"] < 20 || outcomes["render_error"] < 20 {
		t.Errorf("outcomes %v: too few of some kind", outcomes)
	}
}
