package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

// TestDeepSeekV32WithoutTemplate: DeepSeek-V3.2 ships no chat template;
// its folder (config.json model_type deepseek_v32) still renders through
// the encoder under vLLM, and a profile that would need a template
// refuses the request instead of counting bare text.
func TestDeepSeekV32WithoutTemplate(t *testing.T) {
	src := testutil.DeepSeekV32Model(t)
	dir := t.TempDir()
	for _, name := range []string{"tokenizer.json", "config.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "tokenizer_config.json" {
			var cfg map[string]any
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatal(err)
			}
			delete(cfg, "chat_template")
			if b, err = json.Marshal(cfg); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Load(Options{Tokenizer: dir})
	if err != nil {
		t.Fatal(err)
	}
	if m.Template == nil || serverprofile.RendererOf(serverprofile.VLLM, m.Template) != serverprofile.RendererDeepSeekV32 {
		t.Fatalf("template %v", m.Template)
	}
	ex, err := extract.Body([]byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := serverprofile.Render(serverprofile.VLLM, ex, m.Template, time.Time{}, nil)
	// The encoder's prompt: <｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜></think>.
	if err != nil || pr.Count(m.Tokenizer) != 5 {
		t.Errorf("vllm: %v, %d tokens of %q", err, pr.Count(m.Tokenizer), pr.Text)
	}
	// SGLang's encoding_dsv32 variant: the tokenizer's BOS before the
	// encoder's (serverprofile.TestDeepSeekV32SGLangMatchesServer).
	pr, err = serverprofile.Render(serverprofile.SGLang, ex, m.Template, time.Time{}, nil)
	if err != nil || pr.Count(m.Tokenizer) != 6 {
		t.Errorf("sglang: %v, %d tokens of %q", err, pr.Count(m.Tokenizer), pr.Text)
	}
	if _, err := serverprofile.Render(serverprofile.Transformers, ex, m.Template, time.Time{}, nil); err == nil || !strings.Contains(err.Error(), "no chat template") {
		t.Errorf("transformers: %v, want the template's refusal", err)
	}
}

// TestDeepSeekV32NeedsItsTokens: a tokenizer without V3.2's <think> and
// </think> (DeepSeek-V3's) is refused for the encoder, naming the token,
// rather than counted as text.
func TestDeepSeekV32NeedsItsTokens(t *testing.T) {
	v3 := testutil.RefModel(t, "deepseek_v3")
	_, err := Load(Options{Tokenizer: v3, Renderer: "deepseek_v32"})
	if !cli.IsUsage(err) || !strings.Contains(err.Error(), "<think>") {
		t.Errorf("--renderer deepseek_v32 on deepseek_v3: %v", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"config.json": `{"model_type": "deepseek_v32"}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(v3, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Load(Options{Tokenizer: dir}); err == nil || !strings.Contains(err.Error(), "<think>") {
		t.Errorf("model_type deepseek_v32 with DeepSeek-V3's tokenizer: %v", err)
	}
}
