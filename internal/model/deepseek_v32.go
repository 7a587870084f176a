package model

import (
	"fmt"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/serverprofile"
)

// DeepSeek-V3.2 ships no chat template: vLLM and SGLang render it with
// DeepSeek's encoder, each its own copy (serverprofile.RendererDeepSeekV32).
// Its model still gets a template, one that raises, so that the model
// type and --renderer reach the renderer and a server that would need a
// template (transformers' profile here) refuses the request instead of
// counting bare text.
const dsv32NoTemplate = `{{ raise_exception("this model ships no chat template: DeepSeek-V3.2's encoder renders its requests (--server vllm or sglang, or --renderer deepseek_v32)") }}`

// dsv32Tokens are the tokens DeepSeek-V3.2's encoder spells that are not
// in every DeepSeek vocabulary: DeepSeek-V3's tokenizer.json has place
// holders at their ids and would count each as several text tokens.
var dsv32Tokens = []string{"<think>", "</think>", "<｜User｜>", "<｜Assistant｜>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"}

// useDeepSeekV32 gives m the raising template when it has none and the
// encoder renders it, and refuses a tokenizer without the encoder's
// tokens (its counts would not be the server's).
func (m *Model) useDeepSeekV32() error {
	if m.Template == nil {
		if m.TemplateErr != nil {
			return nil // a template that does not load: reported as such
		}
		t, err := chat.Compile(dsv32NoTemplate)
		if err != nil {
			return err
		}
		t.ModelType = "deepseek_v32"
		m.Template = t
	}
	for _, tok := range dsv32Tokens {
		if ids := m.Tokenizer.Encode(tok); len(ids) != 1 {
			return fmt.Errorf("%s: tokenizer.json has no %s token, which DeepSeek-V3.2's encoder writes into every prompt (DeepSeek-V3's vocabulary lacks <think> and </think>: use the model's own tokenizer)", m.Source.Name, tok)
		}
	}
	return nil
}

// rendersDeepSeekV32 is whether m is a deepseek_v32 model or made to
// render as one.
func (m *Model) rendersDeepSeekV32(modelType string) bool {
	return modelType == "deepseek_v32" || (m.Template != nil && m.Template.Renderer == serverprofile.RendererDeepSeekV32)
}
