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

// harmonyExpect is one body of testdata/harmony-expect.jsonl.gz, written by
// scripts/renderers/harmony-ref.py: the token ids the real openai_harmony
// (v0.0.8) renders for it after vLLM's harmony_utils.py made it Harmony
// messages.
type harmonyExpect struct {
	Name  string          `json:"name"`
	Body  json.RawMessage `json:"body"`
	Count int             `json:"count"`
	IDs   []int           `json:"ids"`
}

func readHarmonyExpect(t *testing.T) (now time.Time, cases []harmonyExpect) {
	t.Helper()
	// The header line carries the day the expectations were rendered on.
	type line struct {
		harmonyExpect
		Now string `json:"now"`
	}
	all := testutil.ReadJSONL[line](t, filepath.Join("testdata", "harmony-expect.jsonl.gz"))
	if len(all) < 2 {
		t.Fatal("harmony-expect.jsonl.gz: want a header line, then the cases")
	}
	now, err := time.Parse("2006-01-02", all[0].Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all[1:] {
		cases = append(cases, l.harmonyExpect)
	}
	return now, cases
}

// harmonyTemplate is the gptoss conformance model's template marked as a
// gpt-oss model (its folder has no config.json), as model.Load marks it.
func harmonyTemplate(t *testing.T, m model) *chat.Template {
	t.Helper()
	tmpl := freshTemplate(t, "gptoss")
	tmpl.ModelType = "gpt_oss"
	return tmpl
}

// freshTemplate is a model's template of its own, to mark.
func freshTemplate(t *testing.T, name string) *chat.Template {
	t.Helper()
	src, err := modelsrc.Resolve(filepath.Join(testutil.RefDir(t), "models", name))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestHarmonyMatchesOpenAIHarmony: vLLM's count and token ids of every
// corpus body equal those of the real openai_harmony renderer.
func TestHarmonyMatchesOpenAIHarmony(t *testing.T) {
	now, cases := readHarmonyExpect(t)
	if len(cases) < 100 {
		t.Fatalf("%d bodies in the corpus, want at least 100", len(cases))
	}
	m := loadModel(t, "gptoss")
	tmpl := harmonyTemplate(t, m)
	for _, c := range cases {
		ex, err := extract.Body(c.Body)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pr, err := Render(VLLM, ex, tmpl, now, nil)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if n := pr.Count(m.tok); n != c.Count {
			t.Errorf("%s: count %d, openai_harmony %d", c.Name, n, c.Count)
		}
		if ids := pr.IDs(m.tok); !slices.Equal(ids, c.IDs) {
			t.Errorf("%s: ids differ\n go:  %q\n ref: %q", c.Name, m.tok.Decode(ids, false), m.tok.Decode(c.IDs, false))
		}
	}
}

// TestHarmonyChosenByModelType: under vLLM a gpt_oss model is rendered
// with Harmony; other servers, and other model types, use the template.
func TestHarmonyChosenByModelType(t *testing.T) {
	m := loadModel(t, "gptoss")
	tmpl := harmonyTemplate(t, m)
	if got := RendererOf(VLLM, tmpl); got != RendererHarmony {
		t.Errorf("vllm, gpt_oss: %s", got)
	}
	if got := RendererOf(SGLang, tmpl); got != RendererJinja {
		t.Errorf("sglang, gpt_oss: %s", got)
	}
	if got := RendererOf(VLLM, m.tmpl); got != RendererJinja {
		t.Errorf("vllm, no model type: %s", got)
	}
	forced := freshTemplate(t, "gptoss")
	forced.Renderer = RendererHarmony
	if got := RendererOf(SGLang, forced); got != RendererHarmony {
		t.Errorf("--renderer harmony under sglang: %s", got)
	}
	for _, name := range []string{"nope"} {
		if _, err := ParseRenderer(name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("ParseRenderer(%q): %v", name, err)
		}
	}
}

// TestHarmonyResponsesMatchesOpenAIHarmony: vLLM's count and token ids of
// every Responses body of the corpus
// (testdata/harmony-responses-expect.jsonl.gz, harmony-ref.py --responses:
// vLLM's Responses path transcribed over the real openai types, rendered
// by the real openai_harmony) equal the reference's; the bodies vLLM
// refuses are refused.
func TestHarmonyResponsesMatchesOpenAIHarmony(t *testing.T) {
	type expect struct {
		Name  string          `json:"name"`
		Now   string          `json:"now"`
		Body  json.RawMessage `json:"body"`
		Count int             `json:"count"`
		IDs   []int           `json:"ids"`
		Error string          `json:"error"`
	}
	all := testutil.ReadJSONL[expect](t, "testdata/harmony-responses-expect.jsonl.gz")
	now, err := time.Parse("2006-01-02", all[0].Now)
	if err != nil {
		t.Fatal(err)
	}
	m := loadModel(t, "gptoss")
	tmpl := harmonyTemplate(t, m)
	rendered, refused := 0, 0
	for _, c := range all[1:] {
		ex, err := extract.Body(c.Body)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pr, err := Render(VLLM, ex, tmpl, now, nil)
		if c.Error != "" {
			if !IsRefusal(err) {
				t.Errorf("%s: vLLM refuses (%s); got %v", c.Name, c.Error, err)
			}
			refused++
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		rendered++
		if n := pr.Count(m.tok); n != c.Count {
			t.Errorf("%s: count %d, openai_harmony %d", c.Name, n, c.Count)
		}
		if ids := pr.IDs(m.tok); !slices.Equal(ids, c.IDs) {
			t.Errorf("%s: ids differ\n go:  %q\n ref: %q", c.Name, m.tok.Decode(ids, false), m.tok.Decode(c.IDs, false))
		}
	}
	if rendered < 30 || refused == 0 {
		t.Fatalf("%d bodies rendered, %d refused: want at least 30, and refusals", rendered, refused)
	}
}
