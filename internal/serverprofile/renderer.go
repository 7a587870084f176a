package serverprofile

import (
	"fmt"
	"strings"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
)

// A renderer turns a chat request into the prompt a server prefills. Most
// models go through their Jinja chat template; vLLM renders some model
// types with code of its own (docs/reference/server-preprocessing.md §7).
const (
	RendererJinja       = "jinja"
	RendererHarmony     = "harmony"      // gpt-oss: openai_harmony
	RendererMistral     = "mistral"      // Mistral-format models: mistral_common
	RendererDeepSeekV32 = "deepseek_v32" // DeepSeek's encoding_dsv32.py, as vLLM or SGLang runs it
)

// RendererNames lists the --renderer values.
func RendererNames() []string {
	return []string{RendererJinja, RendererHarmony, RendererMistral, RendererDeepSeekV32}
}

// ParseRenderer reads a --renderer value ("" is the server's choice).
// Renderers named but not yet reproduced are refused here, so that no
// count claims to be theirs.
func ParseRenderer(s string) (string, error) {
	switch s {
	case "", RendererJinja, RendererHarmony, RendererMistral, RendererDeepSeekV32:
		return s, nil
	}
	return "", fmt.Errorf("unknown renderer %q (want one of %s)", s, strings.Join(RendererNames(), ", "))
}

// RendererOf is the renderer p's server uses for the model of t: the
// --renderer choice when one was made, else the server's own choice by
// the model's config.json model_type (vLLM: gpt_oss → Harmony,
// serving_chat's use_harmony; a Mistral-format folder → mistral;
// deepseek_v32 → DeepSeek-V3.2's encoder, the tokenizer mode vLLM's
// registry picks for it), else the Jinja template.
func RendererOf(p Profile, t *chat.Template) string {
	if t == nil {
		return RendererJinja
	}
	if t.Renderer != "" {
		return t.Renderer
	}
	if p == VLLM && t.ModelType == "gpt_oss" {
		return RendererHarmony
	}
	// vLLM's tokenizer_mode auto picks mistral for a folder with
	// tekken.json (the loader sets t.Mistral); SGLang loads a bare
	// tekken.json with transformers' MistralCommonTokenizer, which is
	// mistral-common too (mistral.go's mistralSGLang variant).
	if t.Mistral != nil && (p == VLLM || p == SGLang && !t.Mistral.SentencePiece) {
		return RendererMistral
	}
	// SGLang's resolve_chat_encoding_spec picks "dsv32" for a DeepseekV3*
	// architecture without a chat template (DeepSeek-V3.2's case).
	if (p == VLLM || p == SGLang) && t.ModelType == "deepseek_v32" {
		return RendererDeepSeekV32
	}
	return RendererJinja
}

// rulesRenderer is the renderer of a mix of rules: a renderer of its own
// only when every rule is of a server that renders t's model with it (a
// gap between such a server and another is then reported under the
// first rule family switched, not a cause of its own).
func rulesRenderer(r Rules, t *chat.Template) string {
	first := RendererOf(r[0], t)
	for _, p := range r[1:] {
		if RendererOf(p, t) != first {
			return RendererJinja
		}
	}
	return first
}

// sglangModelRules are what a server does with a model before (or
// instead of) its template when it renders the model with the template
// (docs/reference/server-preprocessing.md §7.1, SGLang 0.5.23):
//   - a Mistral-format model that reaches here (t.Mistral: no Jinja
//     template) under SGLang: a SentencePiece folder (tokenizer.model.v*;
//     SGLang's get_tokenizer takes a bare tekken.json only,
//     is_bare_tekken_checkpoint), or a Tekken one under a mix of rules
//     or --renderer jinja: refused by name rather than counted bare (a
//     Tekken folder alone is rendered by mistral.go's SGLang variant);
//   - gpt-oss under SGLang's chat_template_kwargs rule: SGLang renders it
//     with the Jinja template (serving_chat.py: is_gpt_oss only keeps the
//     special tokens of the output) but refuses chat_template_kwargs
//     reasoning_effort "none" ("Harmony does not support reasoning effort
//     none", _convert_to_internal_request).
func sglangModelRules(r Rules, ex *extract.Inputs, t *chat.Template) error {
	if t == nil {
		return nil
	}
	if t.Mistral != nil {
		if t.Mistral.SentencePiece {
			return refuse(r[AxisKeys], "Mistral-format model", "a SentencePiece (tokenizer.model.v*) model under SGLang is not reproduced: SGLang's get_tokenizer takes a bare tekken.json only")
		}
		return refuse(r[AxisKeys], "Mistral-format model", "a tekken.json model is rendered only by mistral-common, as vLLM (--server vllm) or SGLang (--server sglang) runs it, not through a Jinja template nor a mix of the two")
	}
	if r[AxisKwargs] != SGLang || t.ModelType != "gpt_oss" {
		return nil
	}
	raw, ok := ex.Body.Get("chat_template_kwargs")
	if !ok || isNull(raw) {
		return nil
	}
	kw, err := jsonobj.Members(raw)
	if err != nil {
		return nil // prepareKwargs reports it
	}
	if e, ok := kw.Get("reasoning_effort"); ok {
		if s, _ := str(e); s == "none" {
			return refuse(SGLang, "gpt-oss reasoning_effort none", "chat_template_kwargs reasoning_effort \"none\": Harmony does not support reasoning effort none")
		}
	}
	return nil
}
