package serverprofile

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
)

// TestRendererOfSGLang: SGLang's renderer choices where they differ from
// vLLM's (docs/reference/server-preprocessing.md §7.1, SGLang 0.5.23):
//   - gpt-oss is rendered with its Jinja template (serving_chat.py:
//     is_gpt_oss only keeps the output's special tokens), not Harmony, and
//     chat_template_kwargs reasoning_effort "none" is refused
//     (_convert_to_internal_request);
//   - a Mistral-format folder is not rendered by mistral-common as vLLM
//     runs it: refused by name (SGLang's MistralCommonTokenizer path is
//     not reproduced), never counted bare;
//   - DeepSeek-V3.2 is rendered by SGLang's own encoding_dsv32 variant
//     (chat_encoding.resolve_chat_encoding_spec's "dsv32"), not vLLM's:
//     the same body gives SGLang's prompt, which differs from vLLM's
//     (TestDeepSeekV32SGLangMatchesServer holds the whole corpus), and a
//     mix of the two servers' rules is refused.
func TestRendererOfSGLang(t *testing.T) {
	m := loadModel(t, "gptoss")
	gptoss := harmonyTemplate(t, m)
	if got := RendererOf(SGLang, gptoss); got != RendererJinja {
		t.Errorf("sglang, gpt_oss: %s, want jinja", got)
	}
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	render := func(p Profile, body string, tmpl *chat.Template) (string, error) {
		t.Helper()
		ex, err := extract.Body([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Render(p, ex, tmpl, now, nil)
		return string(pr.Text), err
	}
	// Through the Jinja template: gpt-oss's template writes the effort;
	// and on the Harmony corpus the template's text is not Harmony's.
	text, err := render(SGLang, `{"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"reasoning_effort":"low"}}`, gptoss)
	if err != nil || !strings.Contains(text, "Reasoning: low") {
		t.Errorf("sglang, gpt_oss, effort low: %v %q", err, text)
	}
	_, cases := readHarmonyExpect(t)
	differ := 0
	for _, c := range cases {
		sg, err1 := render(SGLang, string(c.Body), gptoss)
		h, err2 := render(VLLM, string(c.Body), gptoss)
		if err1 == nil && err2 == nil && sg != h {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("sglang rendered every Harmony corpus body as vLLM's Harmony does")
	}
	if _, err := render(SGLang, `{"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"reasoning_effort":"none"}}`, gptoss); !IsRefusal(err) || !strings.Contains(err.Error(), "reasoning effort none") {
		t.Errorf("sglang, gpt_oss, kwargs effort none: %v, want a refusal", err)
	}
	if _, err := render(SGLang, `{"messages":[{"role":"user","content":"hi"}],"reasoning_effort":"none"}`, gptoss); err != nil {
		t.Errorf("sglang, gpt_oss, request effort none (not popped from the kwargs, not refused): %v", err)
	}

	data := testutil.TekkenFile(t, "tekken_240911", "v7")
	mf, err := MistralFormatOf(data)
	if err != nil {
		t.Fatal(err)
	}
	mistral := &chat.Template{Mistral: mf}
	if got := RendererOf(SGLang, mistral); got != RendererMistral {
		t.Errorf("sglang, Mistral format: %s", got)
	}
	if _, err := render(Transformers, `{"messages":[{"role":"user","content":"hi"}]}`, mistral); !IsRefusal(err) || !strings.Contains(err.Error(), "Mistral-format") {
		t.Errorf("transformers, Mistral format: %v, want a refusal naming the rule", err)
	}
	sp := &chat.Template{Mistral: &chat.MistralFormat{Version: mf.Version, Special: mf.Special, SentencePiece: true}}
	if got := RendererOf(SGLang, sp); got != RendererJinja {
		t.Errorf("sglang, SentencePiece Mistral format: %s", got)
	}
	if _, err := render(SGLang, `{"messages":[{"role":"user","content":"hi"}]}`, sp); !IsRefusal(err) || !strings.Contains(err.Error(), "SentencePiece") {
		t.Errorf("sglang, SentencePiece Mistral format: %v, want a refusal naming it", err)
	}

	_, dsv32 := dsv32Model(t)
	if got := RendererOf(SGLang, dsv32); got != RendererDeepSeekV32 {
		t.Errorf("sglang, deepseek_v32: %s", got)
	}
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`
	sg, err := render(SGLang, body, dsv32)
	if want := "<｜begin▁of▁sentence｜><｜begin▁of▁sentence｜><｜User｜>a b<｜Assistant｜></think>"; err != nil || sg != want {
		t.Errorf("sglang, deepseek_v32: %v %q, want %q", err, sg, want)
	}
	vl, err := render(VLLM, body, dsv32)
	if want := "<｜begin▁of▁sentence｜><｜User｜>a\nb<｜Assistant｜></think>"; err != nil || vl != want {
		t.Errorf("vllm, deepseek_v32: %v %q, want %q", err, vl, want)
	}
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var mixed Rules
	for i := range mixed {
		mixed[i] = VLLM
	}
	mixed[AxisKwargs] = SGLang
	if _, err := RenderRules(mixed, ex, dsv32, now, false, nil); !IsRefusal(err) {
		t.Errorf("a vLLM and SGLang mix, deepseek_v32: %v, want a refusal", err)
	}
}
