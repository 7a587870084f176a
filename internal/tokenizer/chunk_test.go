package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/corpus"
)

// TestChunkedEncodeIsExact: a text long enough to be encoded in chunks
// gives the ids of one encode over the whole text, for each kind of
// pipeline (byte-level BPE with NFC, byte-level without normalizer,
// SentencePiece BPE, o200k) and texts that are hard to cut: prose, special
// tokens everywhere, long whitespace runs, and CJK without spaces.
func TestChunkedEncodeIsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 1.4 MB texts whole, several times")
	}
	prose, err := corpus.Default()
	if err != nil {
		t.Fatal(err)
	}
	grow := func(unit string) string {
		return strings.Repeat(unit, (5*chunkBytes+chunkBytes/2)/len(unit)+1)
	}
	texts := map[string]string{
		"prose":    grow(prose[:100_000]),
		"special":  grow("<|im_start|>user\nHello <|eot_id|> there [INST] hi </s>\n"),
		"spaces":   grow("word    \n\n\t  \r\n" + strings.Repeat(" ", 3000) + "x"),
		"cjk":      grow("日本語のテキストと中文字符混在한국어"),
		"combined": grow("e\u0301a\u0308 \u1100\u1161\u11a8 ñ "),
		// One pre-token longer than two chunks: its merges pair up from its
		// start, so no cut inside it is safe (a reviewer's counterexample:
		// qwen3 gave 78039 ids chunked, 78037 whole).
		"letter run": "x" + strings.Repeat("a", 2*chunkBytes+100_000),
	}
	for _, model := range []string{"qwen3", "llama3", "mistral7b", "gptoss"} {
		tk := loadShared(t, model)
		for name, text := range texts {
			sc := tk.getScratch()
			want := tk.encodeChunk(text, true, sc, nil)
			tk.putScratch(sc)
			parts := 0
			sc = tk.getScratch()
			tk.eachChunk(text, sc, func(string, bool) { parts++ })
			tk.putScratch(sc)
			if got := tk.Encode(text); !slices.Equal(got, want) {
				t.Errorf("%s %s: chunked encode differs (%d ids, want %d)", model, name, len(got), len(want))
			}
			if n := tk.Count(text); n != len(want) {
				t.Errorf("%s %s: Count %d, want %d", model, name, n, len(want))
			}
			t.Logf("%s %s: %d bytes in %d chunk(s)", model, name, len(text), parts)
		}
	}
}
