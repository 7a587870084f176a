package modelsrc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/hub/hubtest"
)

// hubEnv points the Hub environment at the stand-in and an empty cache,
// with no token, so that nothing reaches the real Hub.
func hubEnv(t *testing.T, srv *hubtest.Server) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("HF_ENDPOINT", srv.URL())
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("TRANSFORMERS_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
	t.Setenv("HF_TOKEN_PATH", filepath.Join(cache, "no-token"))
	return cache
}

// defaultFilesFor serves the embedded Qwen3 model's files as a Hub repo.
func defaultFilesFor(t *testing.T) map[string][]byte {
	t.Helper()
	src, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if files[name], err = src.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func TestResolveDownloadsFromTheHub(t *testing.T) {
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", defaultFilesFor(t))
	pinned := repo.Commit("v1", map[string][]byte{
		"tokenizer.json":        defaultFilesFor(t)["tokenizer.json"],
		"tokenizer_config.json": []byte(`{"chat_template": "{{ messages[0].content }}"}`),
	})
	cache := hubEnv(t, srv)
	var warn bytes.Buffer
	Stderr = &warn
	t.Cleanup(func() { Stderr = os.Stderr })

	src, err := Resolve("Qwen/Qwen3-8B")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := src.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	// Qwen3's ids for "Hello world", from the Rust library.
	if ids := tok.Encode("Hello world"); len(ids) != 2 || ids[0] != 9707 || ids[1] != 1879 {
		t.Errorf("downloaded model encodes Hello world as %v", ids)
	}
	if want := filepath.Join(cache, "models--Qwen--Qwen3-8B", "snapshots", repo.Head("main")); src.Dir != want || src.Name != "Qwen/Qwen3-8B" {
		t.Errorf("source %s in %s, want %s", src.Name, src.Dir, want)
	}

	// --revision: a tag, then the commit it names; ORG/NAME@REV is what
	// records keep.
	src, err = Resolve(Spec("Qwen/Qwen3-8B", "v1"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, _ := src.ReadFile("tokenizer_config.json"); !strings.Contains(string(cfg), "messages[0]") || src.Name != "Qwen/Qwen3-8B@v1" {
		t.Errorf("revision v1: %s, tokenizer_config.json %.60q", src.Name, cfg)
	}

	// The Hub gone: a pinned commit needs no network and says nothing; a
	// branch falls back to its cached snapshot with a one-line warning.
	srv.Hub.Close()
	srv.CDN.Close()
	if _, err := Resolve(Spec("Qwen/Qwen3-8B", pinned)); err != nil || warn.Len() != 0 {
		t.Errorf("pinned commit, Hub down: %v; warnings %q", err, warn.String())
	}
	if _, err := Resolve("Qwen/Qwen3-8B"); err != nil {
		t.Fatal(err)
	}
	if w := warn.String(); strings.Count(w, "\n") != 1 || !strings.Contains(w, "warning: cannot reach "+srv.URL()) || !strings.Contains(w, repo.Head("main")) {
		t.Errorf("want one warning line naming the endpoint and the cached commit, got %q", w)
	}
	if _, err := Resolve(Spec("Qwen/Qwen3-8B", "v2")); err == nil || !strings.Contains(err.Error(), "not in the HuggingFace cache") {
		t.Errorf("revision v2, not cached, Hub down: %v", err)
	}
}

func TestResolveHubErrorsNameTheFix(t *testing.T) {
	srv := hubtest.New(t)
	gated := srv.AddRepo("meta-llama/Llama-3.1-8B-Instruct", defaultFilesFor(t), hubtest.Gated)
	hubEnv(t, srv)
	if _, err := Resolve("meta-llama/Llama-3.1-8B-Instruct"); err == nil || !strings.Contains(err.Error(), "gated") || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("gated: %v", err)
	}
	if _, err := Resolve(Spec("meta-llama/Llama-3.1-8B-Instruct", "nope")); err == nil || !strings.Contains(err.Error(), "gated") {
		t.Errorf("gated, unknown revision: %v", err)
	}
	srv.Tokens["hf_ok"] = true
	gated.Granted["hf_ok"] = true
	t.Setenv("HF_TOKEN", "hf_ok")
	if _, err := Resolve("meta-llama/Llama-3.1-8B-Instruct"); err != nil {
		t.Errorf("gated with a granted HF_TOKEN: %v", err)
	}
	if _, err := Resolve(Spec("meta-llama/Llama-3.1-8B-Instruct", "nope")); err == nil || !strings.Contains(err.Error(), `has no revision "nope"`) {
		t.Errorf("unknown revision: %v", err)
	}
	if _, err := Resolve("nobody/nothing"); err == nil || !strings.Contains(err.Error(), "nobody/nothing: no such model") || !strings.Contains(err.Error(), "nor is there a local file or folder nobody/nothing") {
		t.Errorf("missing repo: %v", err)
	}
	local := t.TempDir()
	if _, err := Resolve(Spec(local, "v1")); err == nil || !strings.Contains(err.Error(), "is a local path") {
		t.Errorf("--revision with a folder: %v", err)
	}
}

func TestSpec(t *testing.T) {
	for _, c := range [][3]string{
		{"Qwen/Qwen3-8B", "", "Qwen/Qwen3-8B"},
		{"Qwen/Qwen3-8B", "main", "Qwen/Qwen3-8B"},
		{"Qwen/Qwen3-8B", "refs/pr/1", "Qwen/Qwen3-8B@refs/pr/1"},
		{"./models/llama3", "main", "./models/llama3"},
	} {
		if got := Spec(c[0], c[1]); got != c[2] {
			t.Errorf("Spec(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestHubFetchesImageProcessing: a vision-language model's processor
// configuration comes down with its tokenizer (and a model without one
// still resolves).
func TestHubFetchesImageProcessing(t *testing.T) {
	srv := hubtest.New(t)
	files := defaultFilesFor(t)
	files["config.json"] = []byte(`{"model_type": "qwen2_5_vl"}`)
	files["preprocessor_config.json"] = []byte(`{"image_processor_type": "Qwen2VLImageProcessor"}`)
	files["processor_config.json"] = []byte(`{"processor_class": "Qwen2_5_VLProcessor"}`)
	srv.AddRepo("Qwen/Qwen2.5-VL-7B-Instruct", files)
	srv.AddRepo("Qwen/Qwen3-8B", defaultFilesFor(t))
	hubEnv(t, srv)
	src, err := Resolve("Qwen/Qwen2.5-VL-7B-Instruct")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "preprocessor_config.json", "processor_config.json"} {
		got, err := os.ReadFile(filepath.Join(src.Dir, name))
		if err != nil || !bytes.Equal(got, files[name]) {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	if _, err := Resolve("Qwen/Qwen3-8B"); err != nil {
		t.Errorf("a model without image processing: %v", err)
	}
}
