package modelsrc

import (
	"io"

	"github.com/klauspost/compress/zstd"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/hub/hubtest"
)

// qwenTokenizerJSON is the embedded model's tokenizer.json, a stand-in for
// the tokenizer.json a Mistral repo ships beside tekken.json.
func qwenTokenizerJSON(t *testing.T) []byte {
	t.Helper()
	src, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(src.FS, "tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTokenizerModeMistral: --tokenizer-mode mistral reads tekken.json
// even beside a tokenizer.json (vLLM's MistralTokenizer), locally and from
// the Hub (tekken.json, params.json and the tokenizer.model.v* files
// downloaded); auto keeps tokenizer.json; hf refuses a Tekken-only folder;
// a folder without tekken.json is refused naming what it has.
func TestTokenizerModeMistral(t *testing.T) {
	both := writeFiles(t, map[string][]byte{"tokenizer.json": qwenTokenizerJSON(t), "tekken.json": tinyTekken(), "params.json": []byte(`{"dim": 8, "vocab_size": 261}`)})
	src, err := ResolveMode(both, ModeMistral)
	if err != nil {
		t.Fatal(err)
	}
	if src.Format != FormatTekken || filepath.Base(src.TokenizerFile) != "tekken.json" {
		t.Fatalf("mistral mode: format %v, file %s", src.Format, src.TokenizerFile)
	}
	if got := encodeWith(t, both, "abc ab"); slices.Equal(got, []int{260, 35, 259}) {
		t.Errorf("auto mode read tekken.json: %v", got) // tokenizer.json's ids expected
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tok.Encode("abc ab"), []int{260, 35, 259}; !slices.Equal(got, want) {
		t.Errorf("mistral mode: %v, want %v", got, want)
	}
	for _, spec := range []string{filepath.Join(both, "tokenizer.json"), filepath.Join(both, "tekken.json")} {
		if s, err := ResolveMode(spec, ModeMistral); err != nil || s.Format != FormatTekken {
			t.Errorf("%s: %v", spec, err)
		}
	}
	if s, err := ResolveMode(both, ModeAuto); err != nil || s.Format != FormatHF {
		t.Errorf("auto: %v %v", s, err)
	}

	tekkenOnly := writeFiles(t, map[string][]byte{"tekken.json": tinyTekken()})
	for _, c := range []struct{ dir, mode, want string }{
		{tekkenOnly, ModeHF, "no tokenizer.json"},
		{writeFiles(t, map[string][]byte{"tokenizer.json": qwenTokenizerJSON(t)}), ModeMistral, "no tekken.json"},
		{writeFiles(t, map[string][]byte{"tokenizer.model.v3": []byte("sp"), "tokenizer.model.v7": []byte("sp")}), ModeMistral, "tokenizer.model.v*"},
		{tekkenOnly, "slow", "--tokenizer-mode"},
		{"", ModeMistral, "embedded"},
	} {
		_, err := ResolveMode(c.dir, c.mode)
		if err == nil || !strings.Contains(err.Error(), c.want) || !cli.IsUsage(err) {
			t.Errorf("%s, %s: %v, want a usage error naming %q", c.dir, c.mode, err, c.want)
		}
	}

	srv := hubtest.New(t)
	srv.AddRepo("mistralai/Tiny-Both", map[string][]byte{
		"tokenizer.json": qwenTokenizerJSON(t), "tokenizer_config.json": []byte(`{}`), "tekken.json": tinyTekken(),
		"params.json": []byte(`{"dim": 1}`), "tokenizer.model.v3": []byte("sp"),
	})
	hubEnv(t, srv)
	hsrc, err := ResolveMode("mistralai/Tiny-Both", ModeMistral)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tekken.json", "params.json", "tokenizer.model.v3"} {
		if _, err := os.Stat(filepath.Join(hsrc.Dir, name)); err != nil {
			t.Errorf("%s not downloaded: %v", name, err)
		}
	}
	if hsrc.Format != FormatTekken {
		t.Errorf("Hub, mistral mode: format %v", hsrc.Format)
	}
	if a, err := Resolve("mistralai/Tiny-Both"); err != nil || a.Format != FormatHF {
		t.Errorf("Hub, auto: %v %v", a, err)
	}
}

// TestParamsJSON: a malformed params.json beside tekken.json is an error
// naming the file and the field, in the auto and mistral modes alike.
func TestParamsJSON(t *testing.T) {
	for _, c := range []struct{ params, want string }{
		{`{"dim": 4096, "vocab_size": 131072, "vision_encoder": {"image_size": 1024}, "rope_theta": 1e6}`, ""},
		{`{"dim": "4096"}`, "field dim"},
		{`{"vocab_size": 0}`, "field vocab_size"},
		{`{"max_seq_len": 1.5}`, "field max_seq_len"},
		{`{"n_layers": -2}`, "field n_layers"},
		{`{"head_dim": 1e3}`, "field head_dim"},
		{`{"vision_encoder": [1]}`, "field vision_encoder"},
		{`[1, 2]`, "not a JSON object"},
		{`{"dim": 1`, "not valid JSON"},
		{"", "not a JSON object"},
		{`{"dim": 1}` + strings.Repeat(" ", maxParamsSize), "larger than"},
	} {
		dir := writeFiles(t, map[string][]byte{"tekken.json": tinyTekken(), "params.json": []byte(c.params)})
		for _, mode := range []string{ModeAuto, ModeMistral} {
			_, err := ResolveMode(dir, mode)
			if c.want == "" {
				if err != nil {
					t.Errorf("%s (%s): %v", c.params, mode, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "params.json") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%.40s (%s): %v, want an error naming params.json and %q", c.params, mode, err, c.want)
			}
		}
	}
}

// FuzzParamsJSON: any params.json is accepted or refused naming the file,
// without a panic.
func FuzzParamsJSON(f *testing.F) {
	for _, s := range []string{`{"dim": 1}`, `{"vocab_size": 1e2}`, `{"vision_encoder": null}`, `{"dim": 99999999999999999999}`, `[]`, `{"dim":`} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "params.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := CheckParams(dir); err != nil && !strings.Contains(err.Error(), "params.json") {
			t.Fatalf("%v does not name the file", err)
		}
	})
}

// TestSentencePieceFolder: a folder with one of mistral-common's
// SentencePiece models (tokenizer.model.v3, no tokenizer.json nor
// tekken.json) loads it in both modes; "Hello world" is sentencepiece's
// [23325, 2294] (the v3 golden, internal/tokenizer/testdata/ranks).
func TestSentencePieceFolder(t *testing.T) {
	data := zstdFile(t, filepath.Join("..", "tokenizer", "testdata", "ranks", "sp_v3.model.zst"))
	dir := writeFiles(t, map[string][]byte{"tokenizer.model.v3": data})
	for _, mode := range []string{ModeAuto, ModeMistral} {
		src, err := ResolveMode(dir, mode)
		if err != nil {
			t.Fatal(err)
		}
		if src.Format != FormatSentencePiece {
			t.Fatalf("%s: format %v", mode, src.Format)
		}
		tok, err := src.Tokenizer()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := tok.Encode("Hello world"), []int{23325, 2294}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", mode, got, want)
		}
	}
	for name, want := range map[string]string{"tokenizer.model.v3": "v3", "mistral_instruct_tokenizer_241114.model.v7m1": "v7m1", "tokenizer.model": "", "foo.model.v3": "", "tokenizer.model.vx": ""} {
		if got := spVersion(name); got != want {
			t.Errorf("spVersion(%q) = %q, want %q", name, got, want)
		}
	}
}

func zstdFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
