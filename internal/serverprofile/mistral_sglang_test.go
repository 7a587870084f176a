package serverprofile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
)

// TestMistralSGLangMatchesServer: under --server sglang, a Tekken model's
// count and token ids of every body equal those SGLang 0.5.23's own
// OpenAIServingChat._process_messages computes with the
// MistralCommonTokenizer its get_tokenizer loads
// (testdata/mistral-sglang-expect.jsonl.gz, written by
// scripts/renderers/mistral-sglang-ref.py), and the bodies SGLang refuses
// are refused. The corpus is vLLM's Mistral corpus plus bodies where
// SGLang's handling differs (final assistant message,
// continue_final_message, text parts, tool-call arguments, tool_choice).
func TestMistralSGLangMatchesServer(t *testing.T) {
	cases := readExpect[mistralExpect](t, "mistral-sglang-expect.jsonl.gz")
	type config struct{ tekken, version string }
	byConfig := map[config][]mistralExpect{}
	for _, c := range cases {
		k := config{c.Tekken, c.Version}
		byConfig[k] = append(byConfig[k], c)
	}
	if len(byConfig) != 3 {
		t.Fatalf("%d tokenizer configurations, want 3", len(byConfig))
	}
	total, refused := 0, 0
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
			if RendererOf(SGLang, tmpl) != RendererMistral {
				t.Fatal("a Tekken model is not rendered with mistral under sglang")
			}
			for _, c := range cs {
				ex, err := extract.Body(c.Body)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				pr, err := Render(SGLang, ex, tmpl, time.Time{}, nil)
				if c.Error != "" {
					refused++
					if err == nil || !IsRefusal(err) {
						t.Errorf("%s: SGLang refuses it (%s); got %v", c.Name, c.Error, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				total++
				if n := pr.Count(tok); n != c.Count {
					t.Errorf("%s: count %d, SGLang %d", c.Name, n, c.Count)
				}
				if ids := pr.IDs(tok); !slices.Equal(ids, c.IDs) {
					t.Errorf("%s: ids differ\n go:  %v\n ref: %v\n text: %q", c.Name, ids, c.IDs, pr.Text)
				}
			}
		})
	}
	// The corpus's size, so that a shrunken expectation file fails.
	if total < 350 || refused < 60 {
		t.Errorf("%d bodies counted, %d refused; want at least 350 and 60", total, refused)
	}
}

// TestMistralSGLangDiffersFromVLLM: the SGLang variant is not vLLM's on
// the bodies where the two servers part (a check that the test above
// exercises the variant, not vLLM's renderer).
func TestMistralSGLangDiffersFromVLLM(t *testing.T) {
	data := testutil.TekkenFile(t, "tekken_240911", "v7")
	mf, err := MistralFormatOf(data)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &chat.Template{Mistral: mf}
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Render(VLLM, ex, tmpl, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Render(SGLang, ex, tmpl, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v.Text), "a\n\nb") || !strings.Contains(string(s.Text), "[INST]a b[/INST]") {
		t.Errorf("vLLM %q, SGLang %q: want parts joined by \"\\n\\n\" and \" \"", v.Text, s.Text)
	}
	// A mix of vLLM's and SGLang's rules is refused, not rendered by one.
	r := RulesOf(VLLM)
	r[len(r)-1] = SGLang
	if _, err := RenderRules(r, ex, tmpl, time.Time{}, false, nil); !IsRefusal(err) || !strings.Contains(err.Error(), "mix") {
		t.Errorf("a mix of vLLM's and SGLang's rules: %v, want a refusal", err)
	}
}

// TestSGLangToolArguments: arguments as mistral-common's json.dumps
// writes SGLang's parsed dict, values by hand from Python 3.11's
// json.dumps (ensure_ascii: an astral character as a surrogate pair);
// an integer beyond 64 bits as orjson parses it, a float (orjson 3.13.0:
// 1.8446744073709552e+19); what orjson refuses is refused.
func TestSGLangToolArguments(t *testing.T) {
	for in, want := range map[string]string{
		`{"e":"😀","ü":1}`:                `{"e": "\ud83d\ude00", "\u00fc": 1}`,
		` {"a":[1.0,1e3,-0,true,null]} `: `{"a": [1.0, 1000.0, 0, true, null]}`,
		`{"a":"\u00e9\n"}`:               `{"a": "\u00e9\n"}`,
		`{"a":18446744073709551616}`:     `{"a": 1.8446744073709552e+19}`,
		`{"a":"\ud83d\ude00\\u"}`:        `{"a": "\ud83d\ude00\\u"}`,
	} {
		got, err := sglangToolArguments(in)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `[1]`, `"x"`, `{"a":`, `{"a":1e400}`, `{"a":"\ud800"}`, `{"a":"\udc00x"}`, `{"a":"\ud83d"}`, `{"a":-1` + strings.Repeat("0", 400) + `}`} {
		if got, err := sglangToolArguments(in); err == nil {
			t.Errorf("%s: %q, want an error", in, got)
		}
	}
}
