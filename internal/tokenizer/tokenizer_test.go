package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/islkit/islkit/internal/testutil"
)

// tiny builds a tokenizer.json around a model and pipeline given as JSON
// fragments.
func tiny(t *testing.T, normalizer, preTokenizer, model, added string) *Tokenizer {
	t.Helper()
	if added == "" {
		added = "[]"
	}
	src := `{"version":"1.0","added_tokens":` + added + `,"normalizer":` + normalizer +
		`,"pre_tokenizer":` + preTokenizer + `,"model":` + model + `,"post_processor":null,"decoder":null}`
	tk, err := FromJSON([]byte(src))
	if err != nil {
		t.Fatalf("FromJSON: %v", err)
	}
	return tk
}

// wordLevelABC knows single letters and a few words, so ids reveal splits.
const wordLevelABC = `{"type":"WordLevel","unk_token":"<unk>","vocab":{"<unk>":0,"a":1,"b":2,"c":3,"ab":4,"abc":5," ":6,"▁a":7,"▁b":8,"▁":9,"A":10,"1":11,"12":12,"!":13,"a!":14,"[X]":15}}`

func TestSplitBehaviors(t *testing.T) {
	// Each case: behavior, invert, input, expected words (ids of wordLevelABC).
	cases := []struct {
		behavior string
		invert   bool
		in       string
		want     []int
	}{
		{"Isolated", false, "ab!ab", []int{4, 13, 4}},
		{"Removed", false, "ab!ab", []int{4, 4}},
		{"MergedWithPrevious", false, "ab!ab", []int{0, 4}}, // "ab!" is unknown
		{"MergedWithNext", false, "a!ab", []int{1, 0}},      // "!ab" is unknown
		{"Contiguous", false, "a!!b", []int{1, 0, 2}},       // "!!" merged, unknown
		{"Removed", true, "ab!ab", []int{13}},               // invert: the non-matches are removed
	}
	for _, c := range cases {
		pre := `{"type":"Split","pattern":{"String":"!"},"behavior":"` + c.behavior + `","invert":` + map[bool]string{true: "true", false: "false"}[c.invert] + `}`
		tk := tiny(t, "null", pre, wordLevelABC, "")
		if got := tk.Encode(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s invert=%v %q: got %v, want %v", c.behavior, c.invert, c.in, got, c.want)
		}
	}
}

func TestMetaspacePrependSchemes(t *testing.T) {
	added := `[{"id":15,"content":"[X]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]`
	cases := []struct {
		scheme string
		in     string
		want   []int
	}{
		{"always", "a b", []int{7, 8}},
		{"first", "a b", []int{7, 8}},
		{"never", "a b", []int{1, 8}},
		// After an added token, "first" does not prepend: the piece does not
		// start at offset 0 of the input. "always" does.
		{"first", "[X]a", []int{15, 1}},
		{"always", "[X]a", []int{15, 7}},
	}
	for _, c := range cases {
		pre := `{"type":"Metaspace","replacement":"▁","prepend_scheme":"` + c.scheme + `","split":true}`
		tk := tiny(t, "null", pre, wordLevelABC, added)
		if got := tk.Encode(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %v, want %v", c.scheme, c.in, got, c.want)
		}
	}
}

func TestAddedTokenStripAndSingleWord(t *testing.T) {
	// mk builds a tokenizer whose only added token [X] has the given
	// flags, over a pre-tokenizer (single_word needs words) or none (so
	// that spaces stay visible and lstrip/rstrip can be observed).
	mk := func(flags, pre string) *Tokenizer {
		added := `[{"id":15,"content":"[X]",` + flags + `,"normalized":false,"special":true}]`
		return tiny(t, "null", pre, wordLevelABC, added)
	}
	mkRaw := func(flags string) *Tokenizer { return mk(flags, "null") }
	const whitespaceSplit = `{"type":"WhitespaceSplit"}`
	if got := mkRaw(`"lstrip":true,"rstrip":false,"single_word":false`).Encode("a [X]b"); !slices.Equal(got, []int{1, 15, 2}) {
		t.Errorf("lstrip: got %v, want [1 15 2]", got)
	}
	if got := mkRaw(`"lstrip":false,"rstrip":true,"single_word":false`).Encode("a[X] b"); !slices.Equal(got, []int{1, 15, 2}) {
		t.Errorf("rstrip: got %v, want [1 15 2]", got)
	}
	if got := mkRaw(`"lstrip":false,"rstrip":false,"single_word":false`).Encode("a [X] b"); !slices.Equal(got, []int{0, 15, 0}) {
		t.Errorf("no strip: got %v, want [0 15 0] (\"a \" and \" b\" unknown)", got)
	}
	// single_word: inside a word the token is not extracted.
	if got := mk(`"lstrip":false,"rstrip":false,"single_word":true`, whitespaceSplit).Encode("a[X]"); !slices.Equal(got, []int{0}) {
		t.Errorf("single_word inside a word: got %v, want [0]", got)
	}
	if got := mk(`"lstrip":false,"rstrip":false,"single_word":true`, whitespaceSplit).Encode("a [X]"); !slices.Equal(got, []int{1, 15}) {
		t.Errorf("single_word alone: got %v, want [1 15]", got)
	}
}

func TestNormalizers(t *testing.T) {
	cases := []struct {
		normalizer string
		in, want   string
	}{
		{`{"type":"Lowercase"}`, "ABİ", "abi\u0307"},
		{`{"type":"NFC"}`, "e\u0301", "é"},
		{`{"type":"NFD"}`, "é", "e\u0301"},
		{`{"type":"NFKC"}`, "ﬁ①", "fi1"},
		{`{"type":"NFKC"}`, "\u32ff", "\u32ff"}, // Rust's tables lack this mapping
		{`{"type":"NFC"}`, "\U00011935\U00011930", "\U00011935\U00011930"},
		{`{"type":"Prepend","prepend":"▁"}`, "ab", "▁ab"},
		{`{"type":"Replace","pattern":{"String":" "},"content":"▁"}`, "a b c", "a▁b▁c"},
		{`{"type":"Strip","strip_left":true,"strip_right":true}`, " \tab\n ", "ab"},
		{`{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]}`, "a b", "▁a▁b"},
		// clean_text as the Rust library does it: control, format and
		// private-use characters go, unassigned code points stay, white
		// space becomes " ".
		{`{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":false,"strip_accents":false,"lowercase":false}`,
			"a\u00ad\u0600\ue000\x01b\u0378\uffff\U000E0080\U0001F8FF\u2065\tc\u3000d", "ab\u0378\uffff\U000E0080\U0001F8FF\u2065 c d"},
	}
	for _, c := range cases {
		n, err := buildNormalizer([]byte(c.normalizer))
		if err != nil {
			t.Fatalf("%s: %v", c.normalizer, err)
		}
		if got, _ := n.normalize(c.in, true); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.normalizer, c.in, got, c.want)
		}
	}
}

func TestBPEByteFallbackAndUnk(t *testing.T) {
	model := `{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,` +
		`"vocab":{"<unk>":0,"<0xC3>":1,"<0xA9>":2,"a":3,"b":4,"ab":5},"merges":["a b"]}`
	tk := tiny(t, "null", "null", model, "")
	if got := tk.Encode("abé"); !slices.Equal(got, []int{5, 1, 2}) {
		t.Errorf("byte fallback: got %v, want [5 1 2]", got)
	}
	model = `{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":false,` +
		`"vocab":{"<unk>":0,"a":3,"b":4,"ab":5},"merges":[["a","b"]]}`
	tk = tiny(t, "null", "null", model, "")
	if got := tk.Encode("xyab z"); !slices.Equal(got, []int{0, 5, 0}) {
		t.Errorf("fused unk: got %v, want [0 5 0]", got)
	}
}

func TestWordPieceAndUnigram(t *testing.T) {
	wp := `{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,` +
		`"vocab":{"[UNK]":0,"un":1,"##aff":2,"##able":3,"aff":4}}`
	tk := tiny(t, "null", `{"type":"Whitespace"}`, wp, "")
	if got := tk.Encode("unaffable aff xyz"); !slices.Equal(got, []int{1, 2, 3, 4, 0}) {
		t.Errorf("WordPiece: got %v, want [1 2 3 4 0]", got)
	}
	uni := `{"type":"Unigram","unk_id":0,"byte_fallback":false,"vocab":[["<unk>",0],["a",-1],["b",-1],["ab",-1.5],["abc",-4],["c",-2]]}`
	tk = tiny(t, "null", "null", uni, "")
	// "abc": ab+c = -3.5 beats abc = -4 and a+b+c = -4.
	if got := tk.Encode("abc"); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("Unigram: got %v, want [3 5]", got)
	}
	if got := tk.Encode("axxb"); !slices.Equal(got, []int{1, 0, 2}) {
		t.Errorf("Unigram fused unk: got %v, want [1 0 2]", got)
	}
	// Byte fallback on fused unknown runs; ids from the Rust library.
	uni = `{"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":[["<unk>",0],["a",-1],["b",-1],["<0x78>",-5],["<0x79>",-5]]}`
	tk = tiny(t, "null", "null", uni, "")
	for in, want := range map[string][]int{"xxab": {3, 3, 1, 2}, "axy": {1, 3, 4}, "azb": {1, 0, 2}, "zza": {0, 1}, "xzx": {0}} {
		if got := tk.Encode(in); !slices.Equal(got, want) {
			t.Errorf("Unigram byte fallback %q: got %v, want %v", in, got, want)
		}
	}
}

func TestLoadErrorsNameTheComponent(t *testing.T) {
	cases := []struct {
		name, json, want string
	}{
		{"truncated", `{"model": {"type":"BPE"`, "not a valid tokenizer.json"},
		{"no model", `{"added_tokens":[]}`, "model: missing"},
		{"unknown model", `{"model":{"type":"Magic"}}`, `unsupported model type "Magic"`},
		{"unknown normalizer", `{"normalizer":{"type":"Precompiled"},"model":` + wordLevelABC + `}`, `normalizer: unsupported normalizer type "Precompiled"`},
		{"unknown pre-tokenizer", `{"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"UnicodeScripts"}]},"model":` + wordLevelABC + `}`, `pre_tokenizer: Sequence[0]: unsupported pre_tokenizer type "UnicodeScripts"`},
		{"dropout", `{"model":{"type":"BPE","dropout":0.1,"vocab":{},"merges":[]}}`, "dropout"},
		{"merge out of vocab", `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}}`, `merges[0]: token "b" is not in the vocabulary`},
		{"unknown decoder", `{"decoder":{"type":"Nope"},"model":` + wordLevelABC + `}`, `decoder: unsupported decoder type "Nope"`},
	}
	for _, c := range cases {
		_, err := FromJSON([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(path, []byte(`{"model":`), 0o644)
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadFile error %v does not name the file", err)
	}
}

func TestInvalidUTF8BecomesReplacementChar(t *testing.T) {
	tk := loadShared(t, "qwen3")
	// Each maximal subpart of an ill-formed sequence is one U+FFFD, as
	// Python decodes it.
	got := tk.Encode("a\xff\xfeb\xe2\x82")
	want := tk.Encode("a\uFFFD\uFFFDb\uFFFD")
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The byte bounds of each lead byte, as Python's decode (errors="replace") gives them.
	for in, want := range map[string]string{
		"\xed\xa0\x80":         "\uFFFD\uFFFD\uFFFD", // a surrogate's encoding
		"\xf0\x9f\x98":         "\uFFFD",             // truncated 4-byte sequence
		"\xe0\x80\x80":         "\uFFFD\uFFFD\uFFFD", // overlong
		"\xf4\x90\x80\x80":     "\uFFFD\uFFFD\uFFFD\uFFFD",
		"\xc0\xaf":             "\uFFFD\uFFFD",
		"\xe1\x80\xe2\x82\xac": "\uFFFD€",
	} {
		if got := validUTF8Lossy([]byte(in)); got != want {
			t.Errorf("validUTF8Lossy(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPostProcessorsAndSpecialCounts(t *testing.T) {
	for _, c := range []struct {
		model  string
		single int
		first  string
	}{
		{"mistral7b", 1, "<s>"},
		{"llama3", 0, ""},
		{"qwen3", 0, ""},
	} {
		tk := loadShared(t, c.model)
		if n := tk.NumSpecialTokensToAdd(false); n != c.single {
			t.Errorf("%s: NumSpecialTokensToAdd = %d, want %d", c.model, n, c.single)
		}
		ids := tk.EncodeWithSpecialTokens("Hello")
		if len(ids) != tk.Count("Hello")+c.single {
			t.Errorf("%s: with special tokens %v", c.model, ids)
		}
		if c.first != "" {
			if tok := tk.Decode(ids[:1], false); tok != c.first {
				t.Errorf("%s: first token %q, want %q", c.model, tok, c.first)
			}
		}
	}
	// Llama 3.1's template processor adds <|begin_of_text|> (id 128000).
	tk := loadShared(t, "llama3_1")
	if ids, want := tk.EncodeWithSpecialTokens("Hi"), append([]int{128000}, tk.Encode("Hi")...); !slices.Equal(ids, want) {
		t.Errorf("llama3_1: %v, want %v", ids, want)
	}
}

// TestDecodeMatchesRust decodes every golden line's ids and compares with
// what the Rust library's decode returns: the text itself, except for the
// lines listed in testdata/decode_golden.jsonl.gz (NFC-normalised input,
// SentencePiece prefix spaces, unknown bytes).
func TestDecodeMatchesRust(t *testing.T) {
	shared := testutil.RefDir(t)
	type record struct {
		Model   string `json:"model"`
		Line    int    `json:"line"`
		Decoded string `json:"decoded"`
	}
	differs := map[string]map[int]string{}
	for _, rec := range testutil.ReadJSONL[record](t, filepath.Join("testdata", "decode_golden.jsonl.gz")) {
		if differs[rec.Model] == nil {
			differs[rec.Model] = map[int]string{}
		}
		differs[rec.Model][rec.Line] = rec.Decoded
	}
	if len(differs) == 0 {
		t.Fatal("no decode golden records read")
	}
	for _, model := range goldenModels {
		tk := loadShared(t, model)
		lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
		bad := 0
		for i, g := range lines {
			want, ok := differs[model][i+1]
			if !ok {
				want = g.Text
			}
			if got := tk.Decode(g.IDs, false); got != want {
				bad++
				if bad <= 3 {
					t.Errorf("%s line %d: decode = %q, want %q", model, i+1, truncate(got), truncate(want))
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d/%d decodes differ from Rust", model, bad, len(lines))
		}
	}
}

// TestConcurrentCount shares one tokenizer between goroutines (run with
// -race): every goroutine must get the single-threaded counts.
func TestConcurrentCount(t *testing.T) {
	tk := loadShared(t, "qwen3")
	texts := []string{"Hello world", "naïve café, 12345 tokens!", strings.Repeat("the whale ", 300), "日本語のテキスト"}
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = len(tk.Encode(s))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 200; k++ {
				i := (g + k) % len(texts)
				if n := tk.Count(texts[i]); n != want[i] {
					errs <- fmt.Sprintf("goroutine %d: Count(%q) = %d, want %d", g, texts[i][:5], n, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// CountBytes lets the caller reuse its buffer right after the call: no
// word the BPE cache keeps may point into it.
func TestCountBytesKeepsNoReference(t *testing.T) {
	tk := loadShared(t, "qwen3")
	buf := []byte("hello world, reused buffers: jumbled zzqx wordz")
	if got, want := tk.CountBytes(buf), len(tk.Encode(string(buf))); got != want {
		t.Errorf("CountBytes = %d, want %d", got, want)
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	hi := lo + uintptr(cap(buf))
	cached := 0
	for range len(tk.caches) {
		cache := <-tk.caches
		for word := range cache {
			cached++
			if p := uintptr(unsafe.Pointer(unsafe.StringData(word))); p >= lo && p < hi {
				t.Errorf("cached word %q points into the caller's buffer", word)
			}
		}
		tk.caches <- cache
	}
	if cached == 0 {
		t.Fatal("no cached words to check")
	}
}
