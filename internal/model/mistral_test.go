package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

// TestMistralFormatFolder: a folder with tekken.json loads as a
// Mistral-format model: vLLM renders it with mistral-common (the mistral
// renderer), reading the tokenizer version and special tokens from the
// file (mistral-common's default special tokens: [INST] is 3).
func TestMistralFormatFolder(t *testing.T) {
	dir := testutil.TekkenFolder(t, "tekken_240911", "v7")
	m, err := Load(Options{Tokenizer: dir})
	if err != nil {
		t.Fatal(err)
	}
	if m.Template == nil || m.Template.Mistral == nil {
		t.Fatal("no Mistral format on the template")
	}
	if got := m.Template.Mistral.Version; got != "v7" {
		t.Errorf("version %q, want v7", got)
	}
	if got := m.Template.Mistral.Special["[INST]"]; got != 3 {
		t.Errorf("[INST] is %d, want 3", got)
	}
	if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != serverprofile.RendererMistral {
		t.Errorf("vllm renders it with %s", got)
	}
	if got := serverprofile.RendererOf(serverprofile.SGLang, m.Template); got != serverprofile.RendererMistral {
		t.Errorf("sglang renders it with %s", got)
	}
}

// TestMistralFormatBad: a tekken.json whose special tokens are malformed
// fails the load naming the file and the field.
func TestMistralFormatBad(t *testing.T) {
	data := string(testutil.TekkenFile(t, "tekken_240718", "v3"))
	for name, c := range map[string]struct{ json, field string }{
		"rank missing":  {`{"token_str": "<s>"}`, "special_tokens[0].rank"},
		"rank too high": {`{"rank": 5000, "token_str": "<s>"}`, "special_tokens[0].rank"},
		"str missing":   {`{"rank": 1}`, "special_tokens[0].token_str"},
	} {
		dir := t.TempDir()
		bad := strings.Replace(data, `"vocab"`, `"special_tokens": [`+c.json+`], "vocab"`, 1)
		if err := os.WriteFile(filepath.Join(dir, "tekken.json"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(Options{Tokenizer: dir})
		if err == nil || !strings.Contains(err.Error(), "tekken.json") || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want the file and %s named", name, err, c.field)
		}
	}
}

// TestTokenizerModeMistralPin: --tokenizer-mode mistral on a folder with a
// tokenizer.json beside tekken.json loads tekken.json and the mistral
// renderer; its pin (the probe's record) makes compose and send --exact,
// given only the folder, load the same tekken.json and renderer.
func TestTokenizerModeMistralPin(t *testing.T) {
	dir := testutil.TekkenFolder(t, "tekken_240911", "v7")
	tj, err := os.ReadFile(filepath.Join(testutil.RefModel(t, "qwen3"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(Options{Tokenizer: dir, TokenizerMode: "mistral"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Template == nil || m.Template.Mistral == nil || filepath.Base(m.Source.TokenizerFile) != "tekken.json" {
		t.Fatalf("mistral mode loaded %s", m.Source.TokenizerFile)
	}
	pin, err := m.Pin(true)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Renderer != serverprofile.RendererMistral {
		t.Fatalf("pin renderer %q", pin.Renderer)
	}
	p, err := LoadPinned(pin, Options{}, "the probe record", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := serverprofile.RendererOf(serverprofile.VLLM, p.Template); got != serverprofile.RendererMistral || filepath.Base(p.Source.TokenizerFile) != "tekken.json" {
		t.Errorf("pinned: %s through %s", got, p.Source.TokenizerFile)
	}
	// Without the mode the folder is its tokenizer.json, and the pin of a
	// tekken.json model refuses it.
	a, err := Load(Options{Tokenizer: dir})
	if err != nil || a.Template != nil && a.Template.Mistral != nil {
		t.Fatalf("auto mode: %v", err)
	}
	if _, err := Load(Options{Tokenizer: dir, TokenizerMode: "mistral", Renderer: "jinja"}); err == nil || !strings.Contains(err.Error(), "--tokenizer-mode mistral") {
		t.Errorf("--renderer jinja with mistral mode: %v", err)
	}
}

// TestSentencePieceMistralModel: a folder with one mistral-common
// SentencePiece model (the v7 instruct tokenizer, as tokenizer.model.v7)
// loads as a Mistral-format model: version v7 from the file name, the
// special tokens its control pieces ([INST] is 3), rendered by
// mistral-common's encoding under vLLM.
func TestSentencePieceMistralModel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.model.v7"), testutil.ZstdFile(t, filepath.Join(testutil.RepoRoot(t), "internal", "tokenizer", "testdata", "ranks", "sp_v7.model.zst")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(Options{Tokenizer: dir})
	if err != nil {
		t.Fatal(err)
	}
	if m.Template == nil || m.Template.Mistral == nil || m.Template.Mistral.Version != "v7" || m.Template.Mistral.Special["[INST]"] != 3 || m.Template.Mistral.Special["[SYSTEM_PROMPT]"] == 0 {
		t.Fatalf("template %+v, error %v", m.Template, m.TemplateErr)
	}
	if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != serverprofile.RendererMistral {
		t.Errorf("vllm renders it with %s", got)
	}
	// SGLang's get_tokenizer takes a bare tekken.json only: not mistral.
	if !m.Template.Mistral.SentencePiece || serverprofile.RendererOf(serverprofile.SGLang, m.Template) != serverprofile.RendererJinja {
		t.Errorf("sglang: SentencePiece %v, renderer %s; want a SentencePiece model left to the (refusing) template path", m.Template.Mistral.SentencePiece, serverprofile.RendererOf(serverprofile.SGLang, m.Template))
	}
	if n := m.Tokenizer.Count("Hello world"); n != 2 {
		t.Errorf("Hello world: %d tokens, sentencepiece 2", n)
	}
}
