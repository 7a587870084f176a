package hub

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRepoID(t *testing.T) {
	// Valid and invalid ids from huggingface_hub's validate_repo_id rules
	// (its docstring and tests), with the namespace islkit requires.
	for _, id := range []string{"Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "a/b", "openai/gpt-oss-20b", "user_1/x.y_z-1", "mistralai/Mistral-7B-v0.1"} {
		if _, _, err := ParseRepoID(id); err != nil {
			t.Errorf("%q refused: %v", id, err)
		}
	}
	for _, id := range []string{"gpt2", "datasets/foo/bar", ".repo/id", "foo/bar--baz", "other..repo/id", "foo/bar.git", "a/-b", "a/b-", "a/.b", "a/b.", "", "/", "a/", "/b", "a b/c", "a/" + strings.Repeat("x", 97), "ä/b"} {
		if _, _, err := ParseRepoID(id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
}

func TestCheckRevision(t *testing.T) {
	for _, rev := range []string{"main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567", "feature/x-y_z"} {
		if err := CheckRevision(rev); err != nil {
			t.Errorf("%q refused: %v", rev, err)
		}
	}
	for _, rev := range []string{"", "..", "../x", "a/../b", "/abs", "a//b", "a/", "a\\b", "x@y", "a b", "a\x00b", strings.Repeat("r", 256)} {
		if err := CheckRevision(rev); err == nil {
			t.Errorf("%q accepted", rev)
		}
	}
}

// A repo id that parses names one folder directly in the cache.
func FuzzParseRepoID(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen3-8B", "a/b", "../x", "a/..", "a--b/c", "a/b.git", "x/y/z", ".a/b", "a/b\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		org, name, err := ParseRepoID(id)
		if err != nil {
			return
		}
		if org+"/"+name != id {
			t.Fatalf("%q parsed as %q / %q", id, org, name)
		}
		folder := repoFolder(org, name)
		cache := filepath.FromSlash("/cache")
		joined := filepath.Join(cache, folder)
		if filepath.Dir(joined) != cache || filepath.Base(joined) != folder || strings.ContainsAny(folder, `/\`) {
			t.Fatalf("%q: folder %q leaves the cache (%s)", id, folder, joined)
		}
		// models--ORG--NAME splits back into the same id.
		parts := strings.Split(strings.TrimPrefix(folder, "models--"), "--")
		if len(parts) != 2 || parts[0] != org || parts[1] != name {
			t.Fatalf("%q: folder %q is ambiguous", id, folder)
		}
	})
}

// A revision that passes stays inside refs/ and snapshots/ as a path.
func FuzzCheckRevision(f *testing.F) {
	for _, s := range []string{"main", "refs/pr/1", "..", "a/../../b", "/x", "a\\b", "v1.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rev string) {
		if CheckRevision(rev) != nil {
			return
		}
		refs := filepath.FromSlash("/cache/models--a--b/refs")
		p := filepath.Join(refs, filepath.FromSlash(rev))
		rel, err := filepath.Rel(refs, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rev) {
			t.Fatalf("revision %q escapes refs/ (%s)", rev, p)
		}
	})
}

func FuzzNormalizeEtag(f *testing.F) {
	for _, s := range []string{`"abc"`, `W/"abc"`, `"../x"`, `W/`, `""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		etag := normalizeEtag(h)
		if !etagRe.MatchString(etag) {
			return
		}
		blobs := filepath.FromSlash("/cache/blobs")
		if filepath.Dir(filepath.Join(blobs, etag)) != blobs {
			t.Fatalf("ETag %q names %q outside blobs/", h, etag)
		}
	})
}

func TestEnvPrecedence(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	e := FromEnv()
	if want := filepath.Join(home, ".cache", "huggingface", "hub"); e.CacheDir != want || e.Endpoint != "https://huggingface.co" || e.Offline || e.Token != "" {
		t.Errorf("defaults: %+v", e)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "xdg"))
	if e := FromEnv(); e.CacheDir != filepath.Join(home, "xdg", "huggingface", "hub") {
		t.Errorf("XDG_CACHE_HOME: %s", e.CacheDir)
	}
	hfHome := filepath.Join(home, "hf")
	t.Setenv("HF_HOME", hfHome)
	must(t, os.MkdirAll(hfHome, 0o755))
	must(t, os.WriteFile(filepath.Join(hfHome, "token"), []byte("  hf_fromfile\r\n"), 0o600))
	e = FromEnv()
	if e.CacheDir != filepath.Join(hfHome, "hub") || e.Token != "hf_fromfile" || e.TokenFrom != filepath.Join(hfHome, "token") {
		t.Errorf("HF_HOME: %+v", e)
	}
	t.Setenv("HUGGINGFACE_HUB_CACHE", "/legacy")
	if e := FromEnv(); e.CacheDir != "/legacy" {
		t.Errorf("HUGGINGFACE_HUB_CACHE: %s", e.CacheDir)
	}
	t.Setenv("HF_HUB_CACHE", "/explicit")
	t.Setenv("HF_TOKEN", "hf_env")
	t.Setenv("HF_ENDPOINT", "http://127.0.0.1:9/")
	t.Setenv("HF_HUB_OFFLINE", "yes")
	t.Setenv("HF_HUB_ETAG_TIMEOUT", "3")
	t.Setenv("HF_HUB_DOWNLOAD_TIMEOUT", "x")
	e = FromEnv()
	if e.EtagTimeout != 3*time.Second || e.DownloadTimeout != 0 {
		t.Errorf("timeouts: %v, %v", e.EtagTimeout, e.DownloadTimeout)
	}
	if e.CacheDir != "/explicit" || e.Token != "hf_env" || e.TokenFrom != "$HF_TOKEN" || e.Endpoint != "http://127.0.0.1:9" || !e.Offline {
		t.Errorf("explicit: %+v", e)
	}
	for v, want := range map[string]bool{"1": true, "ON": true, "true": true, "0": false, "no": false, "": false} {
		t.Setenv("HF_HUB_OFFLINE", v)
		if got := FromEnv().Offline; got != want {
			t.Errorf("HF_HUB_OFFLINE=%q: offline %v", v, got)
		}
	}
}
