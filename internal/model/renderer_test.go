package model

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/serverprofile"
)

// modelDir is a model folder (the default model's tokenizer, a template)
// with config.json as given ("" for none).
func modelDir(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(filepath.Join("..", "modelsrc", "defaultmodel", "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"tokenizer.json": string(data), "chat_template.jinja": "{{ messages[0].content }}"}
	if config != "" {
		files["config.json"] = config
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRendererByModelType: config.json's model_type reaches the template,
// where serverprofile.RendererOf makes gpt_oss Harmony under vLLM, as
// vLLM's use_harmony does.
func TestRendererByModelType(t *testing.T) {
	m, err := Load(Options{Tokenizer: modelDir(t, `{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != serverprofile.RendererHarmony {
		t.Errorf("gpt_oss under vllm: renderer %q", got)
	}
	m, err = Load(Options{Tokenizer: modelDir(t, `{"model_type": "gpt_oss"}`), Renderer: "jinja"})
	if err != nil {
		t.Fatal(err)
	}
	if got := serverprofile.RendererOf(serverprofile.VLLM, m.Template); got != serverprofile.RendererJinja {
		t.Errorf("--renderer jinja: renderer %q", got)
	}
	m, err = Load(Options{Tokenizer: modelDir(t, ""), Renderer: "harmony"})
	if err != nil {
		t.Fatal(err)
	}
	if got := serverprofile.RendererOf(serverprofile.SGLang, m.Template); got != serverprofile.RendererHarmony {
		t.Errorf("--renderer harmony without config.json: renderer %q", got)
	}
}

// TestRendererRefusals: renderers not reproduced yet, mistral for a folder
// that is not in Mistral format (no tekken.json), and unknown ones
// are usage errors that name them.
func TestRendererRefusals(t *testing.T) {
	dir := modelDir(t, "")
	for _, r := range []string{"mistral", "harmonie"} {
		_, err := Load(Options{Tokenizer: dir, Renderer: r})
		if !cli.IsUsage(err) || !strings.Contains(err.Error(), r) {
			t.Errorf("--renderer %s: %v, want a usage error naming it", r, err)
		}
	}
}

// TestBadConfig: a config.json that is not an object, too large, or
// whose model_type is not a string fails naming the file and the field.
func TestBadConfig(t *testing.T) {
	for _, c := range []struct{ config, want string }{
		{`[1, 2]`, "config.json"},
		{`{"model_type": `, "config.json"},
		{`{"model_type": 7}`, "config.json: field model_type"},
		{`{"model_type": "` + strings.Repeat("x", 300) + `"}`, "config.json: field model_type"},
		{`{"pad": "` + strings.Repeat("x", maxConfigSize) + `"}`, "config.json"},
	} {
		_, err := Load(Options{Tokenizer: modelDir(t, c.config)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("config %.40q: %v, want an error naming %q", c.config, err, c.want)
		}
	}
}
