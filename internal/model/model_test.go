package model

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/cli"
)

func TestLoadDefault(t *testing.T) {
	m, err := Load(Options{Now: "2025-07-10T12:00:00"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Tokenizer == nil || m.Template == nil || m.TemplateErr != nil || m.Now.Year() != 2025 {
		t.Fatalf("%+v", m)
	}
	// "Hello world" is [9707, 1879] for Qwen3 (HF tokenizers).
	if n := m.Tokenizer.Count("Hello world"); n != 2 {
		t.Errorf("Count = %d", n)
	}
	if _, err := Load(Options{Now: "yesterday"}); !cli.IsUsage(err) {
		t.Errorf("bad --now: %v, want a usage error", err)
	}
}

// TestTemplateErrorIsNotFatal: a template that does not compile leaves the
// tokenizer usable and says why in TemplateErr.
func TestTemplateErrorIsNotFatal(t *testing.T) {
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
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("{% if %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(Options{Tokenizer: dir})
	if err != nil {
		t.Fatal(err)
	}
	if m.Template != nil || m.TemplateErr == nil || m.Tokenizer == nil {
		t.Errorf("template %v, err %v", m.Template, m.TemplateErr)
	}
}
