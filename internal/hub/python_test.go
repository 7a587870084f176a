//go:build hfpython

// Cross-check against Python's huggingface_hub itself (scripts/check-hub-python.sh
// runs it; the package must be importable by python3): Python downloads
// from the stand-in Hub and islkit reads that cache offline, islkit
// downloads and Python reads that cache offline, and both caches have the
// same tree. Built only with -tags hfpython, so the default suite needs no
// Python.
package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/hub/hubtest"
)

const pyDownload = `
import inspect, json, os, sys
import filelock
if "mode" not in inspect.signature(filelock.FileLock.__init__).parameters:
    # Debian 12's filelock predates the mode argument huggingface_hub passes.
    class _FileLock(filelock.FileLock):
        def __init__(self, *a, mode=None, **k):
            super().__init__(*a, **k)
    filelock.FileLock = _FileLock
from huggingface_hub import hf_hub_download, try_to_load_from_cache, _CACHED_NO_EXIST
from huggingface_hub.errors import EntryNotFoundError
repo, rev, files = sys.argv[1], sys.argv[2], sys.argv[3:]
out = {}
for f in files:
    try:
        out[f] = hf_hub_download(repo, f, revision=rev)
    except EntryNotFoundError:
        out[f] = "absent" if try_to_load_from_cache(repo, f, revision=rev) is _CACHED_NO_EXIST else None
print(json.dumps(out))
`

func python(t *testing.T, env []string, args ...string) map[string]*string {
	t.Helper()
	res, err := pythonE(env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func pythonE(env []string, args ...string) (map[string]*string, error) {
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	cmd := exec.Command(py, append([]string{"-c", pyDownload}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python huggingface_hub: %v\n%s", err, stderr.Bytes())
	}
	var res map[string]*string
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	return res, nil
}

// tree lists a cache's entries: path, and the target for links; the
// files only huggingface_hub writes for itself (.locks, CACHEDIR.TAG)
// are left out.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." || strings.HasPrefix(rel, ".locks") || rel == "CACHEDIR.TAG" {
			return nil
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			rel += " -> " + target
		} else if info.Mode().IsRegular() {
			data, _ := os.ReadFile(path)
			rel += " = " + hubtest.SHA256(data)
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

func TestSameCacheAsPythonHuggingfaceHub(t *testing.T) {
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	var names []string
	for _, f := range modelFiles {
		names = append(names, f.Name)
	}
	base := []string{"HF_ENDPOINT=" + srv.URL(), "HF_TOKEN=", "HF_TOKEN_PATH=/nonexistent", "HF_HUB_DISABLE_TELEMETRY=1",
		"HF_HUB_DISABLE_XET=1", "HF_HUB_OFFLINE=", "HF_HOME=" + t.TempDir()}

	// Python downloads; islkit reads offline, then online with one HEAD.
	pyCache := t.TempDir()
	got := python(t, append(base, "HF_HUB_CACHE="+pyCache), append([]string{"Qwen/Qwen3-8B", "main"}, names...)...)
	for _, f := range modelFiles {
		if got[f.Name] == nil || (!f.Optional && *got[f.Name] == "absent") {
			t.Errorf("python: %s -> %v", f.Name, got[f.Name])
		}
	}
	c := &Client{Env: Env{Endpoint: srv.URL(), CacheDir: pyCache, Offline: true}}
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil || snap.Commit != repo.Head("main") {
		t.Fatalf("islkit offline on Python's cache: %+v, %v", snap, err)
	}
	c.Offline = false
	gets := srv.Count("", "GET")
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil || srv.Count("", "GET") != gets {
		t.Errorf("islkit online on Python's cache: %v, %d GETs", err, srv.Count("", "GET")-gets)
	}

	// islkit downloads; Python reads offline.
	goCache := t.TempDir()
	c = &Client{Env: Env{Endpoint: srv.URL(), CacheDir: goCache}}
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	got = python(t, append(base, "HF_HUB_CACHE="+goCache, "HF_HUB_OFFLINE=1"), append([]string{"Qwen/Qwen3-8B", "main"}, names...)...)
	for _, f := range modelFiles {
		want := filepath.Join(goCache, "models--Qwen--Qwen3-8B", "snapshots", repo.Head("main"), f.Name)
		if p := got[f.Name]; p == nil || (*p != want && *p != "absent") || (!f.Optional && *p != want) {
			t.Errorf("python offline on islkit's cache: %s -> %v", f.Name, p)
		}
	}

	// The same tree, link for link.
	py, gt := tree(t, filepath.Join(pyCache, "models--Qwen--Qwen3-8B")), tree(t, filepath.Join(goCache, "models--Qwen--Qwen3-8B"))
	if strings.Join(py, "\n") != strings.Join(gt, "\n") {
		t.Errorf("caches differ\npython:\n  %s\nislkit:\n  %s", strings.Join(py, "\n  "), strings.Join(gt, "\n  "))
	}
}

// Python and islkit download the same model into one cache at the same
// moment (the CDN holds both downloads until both are in flight): both
// succeed and the cache is the one either writes alone.
func TestConcurrentWithPythonHuggingfaceHub(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	srv.HoldCDN = 2
	var names []string
	for _, f := range modelFiles {
		names = append(names, f.Name)
	}
	cache := t.TempDir()
	env := []string{"HF_ENDPOINT=" + srv.URL(), "HF_TOKEN=", "HF_TOKEN_PATH=/nonexistent", "HF_HUB_DISABLE_TELEMETRY=1",
		"HF_HUB_DISABLE_XET=1", "HF_HUB_OFFLINE=", "HF_HOME=" + t.TempDir(), "HF_HUB_CACHE=" + cache}
	done := make(chan error, 1)
	go func() {
		_, err := pythonE(env, append([]string{"Qwen/Qwen3-8B", "main"}, names...)...)
		done <- err
	}()
	// Start once Python is past its imports (its first HEAD), so that the
	// two downloads meet at the CDN.
	for deadline := time.Now().Add(30 * time.Second); srv.Count("hub", "HEAD") == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := (&Client{Env: Env{Endpoint: srv.URL(), CacheDir: cache}}).Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	overlapped := srv.Count("cdn", "GET")
	srv.HoldCDN = 0
	root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
	checkCache(t, root)
	alone := t.TempDir()
	if _, err := (&Client{Env: Env{Endpoint: srv.URL(), CacheDir: alone}}).Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	if got, want := tree(t, root), tree(t, filepath.Join(alone, "models--Qwen--Qwen3-8B")); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cache after concurrent downloads:\n  %s\nalone:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if overlapped < 2 {
		t.Logf("the two downloads did not overlap (%d CDN GETs)", overlapped)
	}
}
