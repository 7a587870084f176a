package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// goldenModels are the reference models with golden ids from the
// Rust library in golden/tokens of the reference tree (testutil.RefDir).
var goldenModels = []string{"llama3", "qwen3", "deepseek_v3", "gptoss", "mistral7b", "mistral7b-metaspace"}

type goldenLine struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

var loaded = map[string]*Tokenizer{}

func loadShared(t testing.TB, model string) *Tokenizer {
	t.Helper()
	if tk, ok := loaded[model]; ok {
		return tk
	}
	shared := testutil.RefDir(t)
	tk, err := LoadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	loaded[model] = tk
	return tk
}

// TestGoldenTokens requires every line of every golden file to match the
// Rust library's ids exactly.
func TestGoldenTokens(t *testing.T) {
	shared := testutil.RefDir(t)
	for _, model := range goldenModels {
		t.Run(model, func(t *testing.T) {
			tk := loadShared(t, model)
			lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
			if len(lines) != 2519 {
				t.Errorf("golden file has %d lines, want 2519", len(lines))
			}
			bad := 0
			for i, g := range lines {
				got := tk.Encode(g.Text)
				if !slices.Equal(got, g.IDs) {
					bad++
					if bad <= 5 {
						t.Errorf("line %d %q:\n got %v\nwant %v", i+1, truncate(g.Text), got, g.IDs)
					}
				}
				if n := tk.Count(g.Text); n != len(g.IDs) {
					t.Errorf("line %d: Count = %d, want %d", i+1, n, len(g.IDs))
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d/%d lines differ from the Rust library", model, bad, len(lines))
			}
		})
	}
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
