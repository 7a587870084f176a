package serverprofile

import (
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
)

// mistralExpect is one line of testdata/mistral-expect.jsonl.gz, written
// by scripts/renderers/mistral-ref.py: the token ids vLLM's
// MistralTokenizer (vLLM 0.32.0, mistral-common 1.13.1) encodes for the
// body over one of mistral-common's shipped Tekken files read as a
// tokenizer version, or the error it raises.
type mistralExpect struct {
	Tekken  string          `json:"tekken"`
	Version string          `json:"version"`
	Name    string          `json:"name"`
	Body    json.RawMessage `json:"body"`
	Count   int             `json:"count"`
	IDs     []int           `json:"ids"`
	Error   string          `json:"error"`
}

func readMistralExpect(t *testing.T) []mistralExpect {
	t.Helper()
	return readExpect[mistralExpect](t, "mistral-expect.jsonl.gz")
}

// TestMistralMatchesVLLM: for mistral-common's two Tekken files as
// tokenizer v3 and the newer one as v7, vLLM's count and token ids of
// every corpus body equal those of vLLM's own MistralTokenizer, and the
// bodies it refuses are refused.
func TestMistralMatchesVLLM(t *testing.T) {
	cases := readMistralExpect(t)
	type config struct{ tekken, version string }
	byConfig := map[config][]mistralExpect{}
	for _, c := range cases {
		k := config{c.Tekken, c.Version}
		byConfig[k] = append(byConfig[k], c)
	}
	if len(byConfig) < 3 {
		t.Fatalf("%d tokenizer configurations, want 3", len(byConfig))
	}
	for k, cs := range byConfig {
		t.Run(k.tekken+"-"+k.version, func(t *testing.T) {
			data := testutil.TekkenFile(t, k.tekken, k.version)
			tok, err := tokenizer.FromTekken(data)
			if err != nil {
				t.Fatal(err)
			}
			mf, err := MistralFormatOf(data)
			if err != nil {
				t.Fatal(err)
			}
			tmpl := &chat.Template{Mistral: mf}
			if RendererOf(VLLM, tmpl) != RendererMistral {
				t.Fatal("a Mistral-format model is not rendered with mistral under vllm")
			}
			ok := 0
			for _, c := range cs {
				ex, err := extract.Body(c.Body)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				pr, err := Render(VLLM, ex, tmpl, time.Time{}, nil)
				if c.Error != "" {
					if err == nil || !IsRefusal(err) {
						t.Errorf("%s: vLLM refuses it (%s); got %v", c.Name, c.Error, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				ok++
				if n := pr.Count(tok); n != c.Count {
					t.Errorf("%s: count %d, vLLM %d", c.Name, n, c.Count)
				}
				if ids := pr.IDs(tok); !slices.Equal(ids, c.IDs) {
					t.Errorf("%s: ids differ\n go:  %v\n ref: %v\n text: %q", c.Name, ids, c.IDs, pr.Text)
				}
			}
			if ok < 100 {
				t.Errorf("%d bodies counted, want at least 100", ok)
			}
		})
	}
}
