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
	// tekken.json (the loader sets t.Mistral).
	if p == VLLM && t.Mistral != nil {
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
//   - a Mistral-format model (t.Mistral: tekken.json, no Jinja template)
//     under a profile that does not render it with mistral-common:
//     SGLang loads a bare tekken.json with transformers'
//     MistralCommonTokenizer (hf_transformers/tokenizer.py get_tokenizer,
//     is_bare_tekken_checkpoint) and passes it its own preprocessed
//     messages (apply_chat_template(tokenize=True): its probe finds the
//     text round trip lossy). That preprocessing differs from vLLM's on
//     chat bodies (text parts joined with a space, empty tool-call
//     arguments refused: scripts/sglang/mistral-sglang-check.py), so
//     vLLM's renderer is not SGLang's: refused by name rather than
//     counted bare;
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
		return refuse(r[AxisKeys], "Mistral-format model", "a tekken.json model is rendered here only by mistral-common as vLLM runs it (--server vllm); SGLang's MistralCommonTokenizer path (its own message preprocessing: text parts joined with a space, empty tool-call arguments refused) is not reproduced")
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
