package modelsrc

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/hub/hubtest"
)

// tinyTekken is a tekken.json with the 256 bytes, "ab" and "abc" as ranks
// 256 and 257, and 3 special tokens before them: mistral-common gives
// "abc ab" the ids [260, 35, 259] (ranks 257, 32, 256 shifted by 3; worked
// by hand from Tekkenizer.encode's rules).
func tinyTekken() []byte {
	var vocab []string
	for i, tok := range append(byteTokens(), "ab", "abc") {
		vocab = append(vocab, fmt.Sprintf(`{"rank": %d, "token_bytes": %q, "token_str": null}`, i, base64.StdEncoding.EncodeToString([]byte(tok))))
	}
	return []byte(`{"config": {"pattern": "\\p{L}+| ?\\p{L}+|\\s+|.", "num_vocab_tokens": 258, "default_vocab_size": 261,` +
		` "default_num_special_tokens": 3, "version": "v3"}, "vocab": [` + strings.Join(vocab, ",") + `]}`)
}

func byteTokens() []string {
	var out []string
	for b := 0; b < 256; b++ {
		out = append(out, string([]byte{byte(b)}))
	}
	return out
}

// tinyTiktoken is a tiktoken rank file with the same ranks, a
// tokenizer_config.json whose auto_map names the tokenizer class's module
// and special token <|x|> (id 300), and that module with its pat_str:
// "abc ab<|x|>" is [257, 32, 256, 300].
func tinyTiktoken() map[string][]byte {
	var b bytes.Buffer
	for i, tok := range append(byteTokens(), "ab", "abc") {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(tok)), i)
	}
	return map[string][]byte{
		"tiktoken.model": b.Bytes(),
		"tokenizer_config.json": []byte(`{"auto_map": {"AutoTokenizer": ["tokenization_tiny.TikTokenTokenizer", null]},` +
			` "added_tokens_decoder": {"300": {"content": "<|x|>", "special": true}}}`),
		"tokenization_tiny.py": []byte("import tiktoken\n\nclass TikTokenTokenizer:\n    def __init__(self):\n" +
			"        pat_str = \"|\".join(\n            [\n                r\"\"\"\\p{L}+\"\"\",\n                r\"\"\" ?\\p{L}+\"\"\",\n" +
			"                r\"\"\"\\s+\"\"\",\n                r\"\"\".\"\"\",\n            ]\n        )\n"),
	}
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func encodeWith(t *testing.T, spec, text string) []int {
	t.Helper()
	src, err := Resolve(spec)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok.Encode(text)
}

// TestTekkenAndTiktokenFolders: a folder with tekken.json, or with a
// tiktoken file, and no tokenizer.json loads in its format; so does the
// file given directly.
func TestTekkenAndTiktokenFolders(t *testing.T) {
	tekken := writeFiles(t, map[string][]byte{"tekken.json": tinyTekken(), "params.json": []byte(`{"dim": 1}`)})
	for _, spec := range []string{tekken, filepath.Join(tekken, "tekken.json")} {
		if got, want := encodeWith(t, spec, "abc ab"), []int{260, 35, 259}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", spec, got, want)
		}
	}
	tik := writeFiles(t, tinyTiktoken())
	for _, spec := range []string{tik, filepath.Join(tik, "tiktoken.model")} {
		if got, want := encodeWith(t, spec, "abc ab<|x|>"), []int{257, 32, 256, 300}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", spec, got, want)
		}
	}
	// Without the module its config names, the error says which file.
	files := tinyTiktoken()
	delete(files, "tokenization_tiny.py")
	src, err := Resolve(writeFiles(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tokenizer(); err == nil || !strings.Contains(err.Error(), "tokenization_tiny.py") {
		t.Errorf("missing module: %v", err)
	}
	// A folder with none of the formats.
	if _, err := Resolve(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no tokenizer.json (nor tekken.json") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestHubFallsBackToTekkenAndTiktoken: a Hub repo without tokenizer.json
// is fetched as mistral-common's files, or as a tiktoken model with the
// module its config names.
func TestHubFallsBackToTekkenAndTiktoken(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("mistralai/Tiny-Tekken", map[string][]byte{
		"tekken.json": tinyTekken(), "params.json": []byte(`{"dim": 1}`), "tokenizer.model.v3": []byte("sp"),
	})
	srv.AddRepo("moonshotai/Tiny-Kimi", tinyTiktoken())
	hubEnv(t, srv)
	var warn bytes.Buffer
	Stderr = &warn
	t.Cleanup(func() { Stderr = os.Stderr })

	if got, want := encodeWith(t, "mistralai/Tiny-Tekken", "abc ab"), []int{260, 35, 259}; !slices.Equal(got, want) {
		t.Errorf("tekken from the Hub: %v, want %v", got, want)
	}
	src, _ := Resolve("mistralai/Tiny-Tekken")
	for _, name := range []string{"tekken.json", "params.json", "tokenizer.model.v3"} {
		if _, err := os.Stat(filepath.Join(src.Dir, name)); err != nil {
			t.Errorf("%s not downloaded: %v", name, err)
		}
	}
	if got, want := encodeWith(t, "moonshotai/Tiny-Kimi", "abc ab<|x|>"), []int{257, 32, 256, 300}; !slices.Equal(got, want) {
		t.Errorf("tiktoken from the Hub: %v, want %v", got, want)
	}
	// Offline, the cached snapshots serve.
	t.Setenv("HF_HUB_OFFLINE", "1")
	if got := encodeWith(t, "mistralai/Tiny-Tekken", "ab"); !slices.Equal(got, []int{259}) {
		t.Errorf("offline tekken: %v", got)
	}
	// A repo with none of the formats keeps the tokenizer.json error.
	t.Setenv("HF_HUB_OFFLINE", "")
	srv.AddRepo("acme/nothing", map[string][]byte{"README.md": []byte("hi")})
	if _, err := Resolve("acme/nothing"); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("no tokenizer files: %v", err)
	}
}
