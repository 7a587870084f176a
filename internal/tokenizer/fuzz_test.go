package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"Hello, world!", "  two  spaces\n\n\ttab", "naïve café ①②", "<|begin_of_text|>hi<|eot_id|>",
	"日本語のテキスト", "'s 'S 'ſ", "1234567 89", "\u200d👩‍👩‍👧", "\x00\x7f", "▁▁x▁",
	"<s>[INST] hi [/INST]", "a\r\nb\rc", strings.Repeat("ab ", 200),
}

// FuzzEncode checks invariants the Rust library guarantees on any input:
// Count agrees with Encode, encoding is deterministic, and decoding gives
// the text back for tokenizers whose pipeline keeps every byte (Llama 3
// has no normalizer; gpt-oss neither).
func FuzzEncode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	models := map[string]*Tokenizer{}
	for _, m := range []string{"llama3", "gptoss", "qwen3", "mistral7b"} {
		models[m] = loadShared(f, m)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, tk := range models {
			ids := tk.Encode(s)
			if n := tk.Count(s); n != len(ids) {
				t.Fatalf("%s: Count(%q) = %d, len(Encode) = %d", name, s, n, len(ids))
			}
			if again := tk.Encode(s); !slices.Equal(again, ids) {
				t.Fatalf("%s: Encode(%q) not deterministic: %v then %v", name, s, ids, again)
			}
			if (name == "llama3" || name == "gptoss") && utf8.ValidString(s) {
				if got := tk.Decode(ids, false); got != s {
					t.Fatalf("%s: Decode(Encode(%q)) = %q", name, s, got)
				}
			}
		}
	})
}

// FuzzSpaceMarkSplit checks that merging a SentencePiece word piece by
// piece (splitBeforeSpace) gives the ids of Rust's single pass over it.
func FuzzSpaceMarkSplit(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	tk := loadShared(f, "mistral7b")
	m := tk.model.(*bpe)
	if !m.splitBeforeSpace {
		f.Fatal("mistral7b's vocabulary should allow splitting before ▁")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		word := "▁" + strings.ReplaceAll(s, " ", "▁")
		whole := m.mergeWord(word, nil)
		split := m.tokenizeBySpaceMark(word, nil, nil)
		if !slices.Equal(whole, split) {
			t.Fatalf("%q: whole %v, split %v", word, whole, split)
		}
	})
}
