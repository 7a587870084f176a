package testutil

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TekkenFile is one of mistral-common's shipped Tekken files
// ("tekken_240718", "tekken_240911"; kept compressed under
// internal/tokenizer/testdata/ranks) with its config.version (v3 in
// both) set to version, as scripts/renderers/mistral-ref.py sets it:
// mistral-common loads the same vocabulary as tokenizer v3 or v7.
func TekkenFile(t testing.TB, name, version string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(RepoRoot(t), "internal", "tokenizer", "testdata", "ranks", name+".json.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	old := `"version": "v3"`
	if !strings.Contains(s, old) {
		old = `"version":"v3"`
	}
	if strings.Count(s, old) != 1 {
		t.Fatalf("%s: no single config.version v3 to rewrite", name)
	}
	return []byte(strings.Replace(s, old, `"version": "`+version+`"`, 1))
}

// TekkenFolder is a Mistral-format model folder holding only
// TekkenFile(name, version) as tekken.json.
func TekkenFolder(t testing.TB, name, version string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tekken.json"), TekkenFile(t, name, version), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ZstdFile is the content of a zstd-compressed test file (the SentencePiece
// models of internal/tokenizer/testdata/ranks, say).
func ZstdFile(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
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
