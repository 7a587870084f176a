package tokenizer

import (
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestDecodeTable checks that the byte-level models decode through the
// per-id table, and that it gives what the decoder chain (checked against
// Rust by TestDecodeMatchesRust) gives: every id alone (added tokens,
// partial UTF-8 bytes), and golden lines cut at every 7th id, which splits
// characters across cuts.
func TestDecodeTable(t *testing.T) {
	shared := testutil.RefDir(t)
	for _, model := range []string{"llama3", "qwen3", "gptoss", "deepseek_v3"} {
		tk := loadShared(t, model)
		if tk.byteDecode == nil {
			t.Fatalf("%s: no decode table for a ByteLevel decoder", model)
		}
		table := tk.byteDecode()
		for id := -1; id <= len(table); id++ {
			ids := []int{id}
			if got, want := tk.Decode(ids, false), tk.decodeChain(ids, false); got != want {
				t.Fatalf("%s: Decode([%d]) = %q, chain %q", model, id, got, want)
			}
		}
		lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
		for i, g := range lines {
			for from := 0; from < len(g.IDs); from += 7 {
				ids := g.IDs[from:min(len(g.IDs), from+11)]
				if got, want := tk.Decode(ids, false), tk.decodeChain(ids, false); got != want {
					t.Fatalf("%s line %d ids[%d:]: Decode = %q, chain %q", model, i+1, from, got, want)
				}
			}
		}
	}
	for _, model := range []string{"mistral7b", "mistral7b-metaspace"} {
		if tk := loadShared(t, model); tk.byteDecode != nil {
			t.Errorf("%s: a decode table for a decoder that is not ByteLevel alone", model)
		}
	}
}
