package testutil

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The unpacked tree holds every reference model and golden file the
// conformance tests read; a missing one would otherwise surface as a
// confusing failure far from here.
func TestRefDirHoldsTheReferenceTree(t *testing.T) {
	dir := RefDir(t)
	models := RefModels(t)
	want := []string{"deepseek_v3", "gptoss", "llama3", "llama3_1", "mistral7b", "mistral7b-metaspace", "qwen3"}
	if !slices.Equal(models, want) {
		t.Errorf("models %v, want %v", models, want)
	}
	for _, m := range want {
		for _, f := range []string{"tokenizer.json", "tokenizer_config.json"} {
			if st, err := os.Stat(filepath.Join(dir, "models", m, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s/%s: %v", m, f, err)
			}
		}
		if m == "llama3_1" {
			continue // no golden token file of its own: llama3's ids hold for it without special tokens
		}
		if _, err := os.Stat(filepath.Join(dir, "golden", "tokens", m+".jsonl")); err != nil {
			t.Error(err)
		}
	}
	wire, _ := filepath.Glob(filepath.Join(dir, "golden", "wire", "*.jsonl"))
	templates, _ := filepath.Glob(filepath.Join(dir, "templates", "*.jinja"))
	if len(wire) != 7 || len(templates) != 71 {
		t.Errorf("%d wire files (want 7), %d templates (want 71)", len(wire), len(templates))
	}
	for _, f := range []string{"golden/templates.jsonl", "reference/unicode16-classes.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// A second call in the same binary is the same folder, not a new unpack.
	if again := RefDir(t); again != dir {
		t.Errorf("RefDir moved from %s to %s", dir, again)
	}
}
