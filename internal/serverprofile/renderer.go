package serverprofile

import (
	"fmt"
	"strings"

	"github.com/islkit/islkit/internal/chat"
)

// A renderer turns a chat request into the prompt a server prefills. Most
// models go through their Jinja chat template; vLLM renders some model
// types with code of its own (docs/reference/server-preprocessing.md §7).
const (
	RendererJinja       = "jinja"
	RendererHarmony     = "harmony"      // gpt-oss: openai_harmony
	RendererMistral     = "mistral"      // Mistral-format models: mistral_common
	RendererDeepSeekV32 = "deepseek_v32" // DeepSeek's encoding_dsv32.py, as vLLM runs it
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
	if p == VLLM && t.ModelType == "deepseek_v32" {
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
