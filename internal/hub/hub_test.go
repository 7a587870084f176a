package hub

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/hub/hubtest"
)

// The embedded Qwen3 files, and their names in a huggingface_hub cache:
// tokenizer.json is an LFS file (blob named by its SHA-256, the oid the
// real Qwen/Qwen3-8B repo lists), tokenizer_config.json a git file (blob
// named by its git blob id, from `git hash-object`).
const (
	qwenTokenizerSHA256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
	qwenConfigGitSHA1   = "68a67c7361ebd4d3902071af5eedb50db68115fe"
	qwenTokenizerSize   = 11422654
)

var qwenOnce = sync.OnceValues(func() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		f, err := os.Open(filepath.Join("..", "modelsrc", "defaultmodel", name+".gz"))
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		if files[name], err = io.ReadAll(zr); err != nil {
			return nil, err
		}
		f.Close()
	}
	files["config.json"] = []byte(`{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}` + "\n")
	return files, nil
})

func qwenFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := qwenOnce()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// modelFiles is what modelsrc asks for.
var modelFiles = []File{
	{Name: "tokenizer.json"},
	{Name: "tokenizer_config.json"},
	{Name: "chat_template.jinja", Optional: true},
	{Name: "special_tokens_map.json", Optional: true},
	{Name: "generation_config.json", Optional: true},
	{Name: "config.json", Optional: true},
}

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func newClient(srv *hubtest.Server, cache string, warn *warnings) *Client {
	c := &Client{Env: Env{Endpoint: srv.URL(), CacheDir: cache}}
	if warn != nil {
		c.Warn = warn.add
	}
	return c
}

func readlink(t *testing.T, path string) string {
	t.Helper()
	target, err := os.Readlink(path)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDownloadLaysOutTheCacheAsHuggingfaceHub(t *testing.T) {
	srv := hubtest.New(t)
	files := qwenFiles(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", files)
	srv.Tokens["hf_good"] = true
	commit := repo.Head("main")
	cache := t.TempDir()
	c := newClient(srv, cache, nil)
	c.Token, c.TokenFrom = "hf_good", "$HF_TOKEN"

	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
	if snap.Commit != commit || snap.Dir != filepath.Join(root, "snapshots", commit) {
		t.Fatalf("snapshot %+v, want commit %s under %s", snap, commit, root)
	}
	if snap.Downloaded != int64(qwenTokenizerSize+len(files["tokenizer_config.json"])+len(files["config.json"])) {
		t.Errorf("downloaded %d bytes", snap.Downloaded)
	}
	// Relative links into blobs/, named by the ETag the Hub sent.
	if got := readlink(t, filepath.Join(snap.Dir, "tokenizer.json")); got != "../../blobs/"+qwenTokenizerSHA256 {
		t.Errorf("tokenizer.json -> %s", got)
	}
	if got := readlink(t, filepath.Join(snap.Dir, "tokenizer_config.json")); got != "../../blobs/"+qwenConfigGitSHA1 {
		t.Errorf("tokenizer_config.json -> %s", got)
	}
	for name, data := range files {
		if got := mustRead(t, filepath.Join(snap.Dir, name)); !bytes.Equal(got, data) {
			t.Errorf("%s: cached content differs (%d bytes, want %d)", name, len(got), len(data))
		}
	}
	// refs/main holds the bare commit id; absent optional files are
	// remembered in .no_exist, as huggingface_hub does.
	if got := string(mustRead(t, filepath.Join(root, "refs", "main"))); got != commit {
		t.Errorf("refs/main = %q, want %q", got, commit)
	}
	for _, name := range []string{"chat_template.jinja", "special_tokens_map.json", "generation_config.json"} {
		if _, err := os.Stat(filepath.Join(root, ".no_exist", commit, name)); err != nil {
			t.Errorf(".no_exist marker for %s: %v", name, err)
		}
	}
	checkCache(t, root)

	// The token went to the Hub, never to the CDN; tokenizer.json came
	// from the CDN; everything after the first HEAD was asked at the
	// commit, not at main.
	var cdnGets int
	for _, r := range srv.Requests() {
		switch r.Server {
		case "cdn":
			if r.Auth != "" {
				t.Errorf("CDN received Authorization %q on %s", r.Auth, r.Path)
			}
			if r.Method == "GET" && strings.HasSuffix(r.Path, qwenTokenizerSHA256) {
				cdnGets++
			}
		case "hub":
			if r.Auth != "Bearer hf_good" {
				t.Errorf("Hub request %s %s without the token (%q)", r.Method, r.Path, r.Auth)
			}
		}
	}
	if cdnGets != 1 {
		t.Errorf("%d CDN downloads of tokenizer.json, want 1", cdnGets)
	}
	reqs := srv.Requests()
	if reqs[0].Method != "HEAD" || reqs[0].Path != "/Qwen/Qwen3-8B/resolve/main/tokenizer.json" {
		t.Errorf("first request %+v", reqs[0])
	}
	for _, r := range reqs[1:] {
		if r.Server == "hub" && !strings.Contains(r.Path, "/resolve/"+commit+"/") {
			t.Errorf("later request not pinned to the commit: %s %s", r.Method, r.Path)
		}
	}
}

// checkCache asserts what a torn or racy write would break: every blob's
// content matches its name where the name is a SHA-256, every snapshot
// file is a relative link to an existing blob, every ref names a
// snapshot, and no temporary file is left.
func checkCache(t *testing.T, root string) {
	t.Helper()
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		base := filepath.Base(path)
		if strings.HasSuffix(base, ".incomplete") || strings.HasSuffix(base, ".tmp") {
			t.Errorf("temporary file left: %s", rel)
		}
		switch {
		case strings.HasPrefix(rel, "blobs"+string(filepath.Separator)):
			data := mustRead(t, path)
			if sha256Re.MatchString(base) && hubtest.SHA256(data) != base {
				t.Errorf("blob %s has SHA-256 %s", base, hubtest.SHA256(data))
			}
			if commitRe.MatchString(base) && hubtest.GitSHA1(data) != base {
				t.Errorf("blob %s has git id %s", base, hubtest.GitSHA1(data))
			}
		case strings.HasPrefix(rel, "snapshots"+string(filepath.Separator)) && info.Mode()&os.ModeSymlink != 0:
			target := readlink(t, path)
			if filepath.IsAbs(target) || !strings.HasPrefix(target, "../") {
				t.Errorf("%s -> %s: not a relative link", rel, target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s -> %s: dangling", rel, target)
			}
		case strings.HasPrefix(rel, "refs"+string(filepath.Separator)) && info.Mode().IsRegular():
			commit := string(mustRead(t, path))
			if _, err := os.Stat(filepath.Join(root, "snapshots", commit)); err != nil {
				t.Errorf("%s = %q: no such snapshot", rel, commit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A GET that redirects to another host (port) loses the token on the way,
// as httpx drops it for huggingface_hub; Go alone would keep it for the
// same host name on another port.
func TestRedirectedDownloadDropsTheToken(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	srv.GETViaCDN = true
	srv.Tokens["hf_good"] = true
	c := newClient(srv, t.TempDir(), nil)
	c.Token = "hf_good"
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(snap.Dir, "tokenizer_config.json")); !bytes.Equal(got, qwenFiles(t)["tokenizer_config.json"]) {
		t.Error("tokenizer_config.json differs")
	}
	viaCDN := 0
	for _, r := range srv.Requests() {
		if r.Server == "cdn" {
			viaCDN++
			if r.Auth != "" {
				t.Errorf("CDN received Authorization on %s", r.Path)
			}
		} else if r.Method == "GET" && r.Auth != "Bearer hf_good" {
			t.Errorf("Hub GET %s without the token", r.Path)
		}
	}
	if viaCDN != 3 { // tokenizer.json (LFS), tokenizer_config.json and config.json (redirected GETs)
		t.Errorf("%d CDN requests, want 3", viaCDN)
	}
}

func TestCachedSnapshotCostsOneHeadAndAPinnedCommitNone(t *testing.T) {
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	cache := t.TempDir()
	c := newClient(srv, cache, nil)
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	// main may have moved: one HEAD says it has not, and the rest is
	// known at that commit (present, or marked absent).
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[before:]; len(got) != 1 || got[0].Method != "HEAD" {
		t.Errorf("second resolution of main made %d requests (%+v), want one HEAD", len(got), got)
	}
	before = len(srv.Requests())
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", repo.Head("main"), modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()) - before; n != 0 || snap.Commit != repo.Head("main") {
		t.Errorf("pinned commit: %d requests, commit %s", n, snap.Commit)
	}
}

// layOutByHand writes a cache as huggingface_hub would have: blobs by
// ETag, relative snapshot links, refs/main without a newline, a .no_exist
// marker; as another process would leave it.
func layOutByHand(t *testing.T, cache, commit string, files map[string][]byte) string {
	t.Helper()
	root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
	for name, data := range files {
		etag := hubtest.GitSHA1(data)
		if len(data) >= 1<<20 {
			etag = hubtest.SHA256(data)
		}
		must(t, os.MkdirAll(filepath.Join(root, "blobs"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "blobs", etag), data, 0o644))
		must(t, os.MkdirAll(filepath.Join(root, "snapshots", commit), 0o755))
		must(t, os.Symlink("../../blobs/"+etag, filepath.Join(root, "snapshots", commit, name)))
	}
	must(t, os.MkdirAll(filepath.Join(root, "refs"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "refs", "main"), []byte(commit), 0o644))
	for _, name := range []string{"chat_template.jinja", "special_tokens_map.json", "generation_config.json", "config.json"} {
		if files[name] == nil {
			must(t, os.MkdirAll(filepath.Join(root, ".no_exist", commit), 0o755))
			must(t, os.WriteFile(filepath.Join(root, ".no_exist", commit, name), nil, 0o644))
		}
	}
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestACacheWrittenByAnotherProcess(t *testing.T) {
	files := qwenFiles(t)
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", files)
	commit := repo.Head("main")
	cache := t.TempDir()
	layOutByHand(t, cache, commit, files)
	var warn warnings
	c := newClient(srv, cache, &warn)

	// Online: the Hub confirms main is still there; nothing is fetched.
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit != commit || snap.Downloaded != 0 || srv.Count("", "GET") != 0 || srv.Count("hub", "HEAD") != 1 {
		t.Errorf("snapshot %+v after %d HEADs and %d GETs, want the hand-laid one after 1 HEAD", snap, srv.Count("hub", "HEAD"), srv.Count("", "GET"))
	}
	// Offline: through refs/main alone.
	c.Offline = true
	before := len(srv.Requests())
	snap, err = c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil || snap.Commit != commit {
		t.Fatalf("offline: %+v, %v", snap, err)
	}
	if n := len(srv.Requests()) - before; n != 0 {
		t.Errorf("HF_HUB_OFFLINE made %d requests", n)
	}
	if got := mustRead(t, filepath.Join(snap.Dir, "tokenizer.json")); !bytes.Equal(got, files["tokenizer.json"]) {
		t.Error("tokenizer.json read through the hand-made link differs")
	}
	if w := warn.all(); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
}

func TestOfflineNeverTouchesTheNetwork(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	c := newClient(srv, t.TempDir(), nil)
	c.Offline = true
	_, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Offline || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") || !strings.Contains(err.Error(), "Qwen/Qwen3-8B") {
		t.Errorf("offline, not cached: %v", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests with HF_HUB_OFFLINE", n)
	}
}

func TestUnreachableHubFallsBackToTheCacheWithAWarning(t *testing.T) {
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	cache := t.TempDir()
	var warn warnings
	c := newClient(srv, cache, &warn)
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	srv.Hub.Close()
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit != repo.Head("main") {
		t.Errorf("fell back to %s", snap.Commit)
	}
	w := warn.all()
	if len(w) != 1 || strings.Contains(w[0], "\n") || !strings.Contains(w[0], "cannot reach "+srv.URL()) || !strings.Contains(w[0], snap.Commit) || strings.Contains(w[0], "not in the") {
		t.Errorf("want one one-line warning naming the endpoint and the commit, got %q", w)
	}
	// Another revision is not in the cache: an error that says so.
	_, err = c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "v2", modelFiles)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Unreachable || !strings.Contains(err.Error(), "revision v2") || !strings.Contains(err.Error(), "not in the HuggingFace cache") || !strings.Contains(err.Error(), snap.Commit) {
		t.Errorf("unreachable, revision not cached: %v", err)
	}
}

func TestGatedPrivateAndBadTokens(t *testing.T) {
	srv := hubtest.New(t)
	files := qwenFiles(t)
	gated := srv.AddRepo("meta-llama/Llama-3.1-8B-Instruct", files, hubtest.Gated)
	private := srv.AddRepo("acme/secret", files, hubtest.Private)
	srv.Tokens["hf_granted"], srv.Tokens["hf_other"] = true, true
	gated.Granted["hf_granted"], private.Granted["hf_granted"] = true, true

	cases := []struct {
		repo, token string
		kind        Kind
		want        []string
	}{
		{"meta-llama/Llama-3.1-8B-Instruct", "", Gated, []string{"gated", "HF_TOKEN", "request access on " + srv.URL() + "/meta-llama/Llama-3.1-8B-Instruct"}},
		{"meta-llama/Llama-3.1-8B-Instruct", "hf_other", Gated, []string{"gated", "HF_TOKEN", "the token from $HF_TOKEN was not"}},
		{"acme/secret", "", RepoNotFound, []string{"acme/secret", "private", "HF_TOKEN"}},
		{"acme/secret", "hf_other", RepoNotFound, []string{"acme/secret", "the token from $HF_TOKEN has no access"}},
		{"acme/secret", "hf_revoked", BadToken, []string{"refused the token from $HF_TOKEN", "HF_TOKEN"}},
	}
	for _, tc := range cases {
		c := newClient(srv, t.TempDir(), nil)
		if tc.token != "" {
			c.Token, c.TokenFrom = tc.token, "$HF_TOKEN"
		}
		_, err := c.Snapshot(context.Background(), tc.repo, "main", modelFiles)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tc.kind {
			t.Errorf("%s with token %q: %v, want kind %d", tc.repo, tc.token, err, tc.kind)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s with token %q: %q does not say %q", tc.repo, tc.token, err, w)
			}
		}
	}
	for _, id := range []string{"meta-llama/Llama-3.1-8B-Instruct", "acme/secret"} {
		c := newClient(srv, t.TempDir(), nil)
		c.Token = "hf_granted"
		if _, err := c.Snapshot(context.Background(), id, "main", modelFiles); err != nil {
			t.Errorf("%s with a granted token: %v", id, err)
		}
	}
}

func TestMissingRepoRevisionAndFileSayWhich(t *testing.T) {
	srv := hubtest.New(t)
	files := qwenFiles(t)
	srv.AddRepo("Qwen/Qwen3-8B", files)
	noTok := map[string][]byte{"tokenizer_config.json": files["tokenizer_config.json"]}
	srv.AddRepo("acme/sentencepiece-only", noTok)
	cases := []struct {
		repo, rev string
		kind      Kind
		want      string
	}{
		{"nobody/nothing", "main", RepoNotFound, "nobody/nothing: no such model on " + srv.URL()},
		{"Qwen/Qwen3-8B", "v9", RevisionNotFound, `Qwen/Qwen3-8B has no revision "v9"`},
		{"acme/sentencepiece-only", "main", EntryNotFound, "acme/sentencepiece-only has no file tokenizer.json"},
	}
	for _, tc := range cases {
		c := newClient(srv, t.TempDir(), nil)
		_, err := c.Snapshot(context.Background(), tc.repo, tc.rev, modelFiles)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s@%s: %v, want %q", tc.repo, tc.rev, err, tc.want)
		}
	}
	// A required file missing after the first is an error too.
	only := map[string][]byte{"tokenizer.json": files["tokenizer.json"]}
	srv.AddRepo("acme/no-config", only)
	_, err := newClient(srv, t.TempDir(), nil).Snapshot(context.Background(), "acme/no-config", "main", modelFiles)
	if err == nil || !strings.Contains(err.Error(), "acme/no-config has no file tokenizer_config.json") {
		t.Errorf("missing tokenizer_config.json: %v", err)
	}
}

func TestRenamedRepoAndSlashedRevision(t *testing.T) {
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	pr := repo.Commit("refs/pr/1", map[string][]byte{
		"tokenizer.json":        qwenFiles(t)["tokenizer.json"],
		"tokenizer_config.json": []byte(`{"chat_template": "{{ messages }}"}`),
	})
	srv.Rename("Qwen/Qwen3-8B-old", "Qwen/Qwen3-8B")
	srv.Tokens["hf_good"] = true
	cache := t.TempDir()
	c := newClient(srv, cache, nil)
	c.Token = "hf_good"
	// A renamed repo answers HEAD with a relative redirect, which is
	// followed with the token; the cache folder is the name asked for.
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B-old", "main", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(snap.Dir, filepath.Join(cache, "models--Qwen--Qwen3-8B-old")) {
		t.Errorf("renamed repo cached in %s", snap.Dir)
	}
	// refs/pr/1 is quoted whole in the URL and written to refs/refs/pr/1.
	snap, err = c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "refs/pr/1", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
	if got := string(mustRead(t, filepath.Join(root, "refs", "refs", "pr", "1"))); got != pr || snap.Commit != pr {
		t.Errorf("refs/refs/pr/1 = %q, snapshot %s, want %s", got, snap.Commit, pr)
	}
	found := false
	for _, r := range srv.Requests() {
		found = found || r.Path == "/Qwen/Qwen3-8B/resolve/refs%2Fpr%2F1/tokenizer.json"
	}
	if !found {
		t.Error("no request for /resolve/refs%2Fpr%2F1/tokenizer.json")
	}
	// The unchanged tokenizer.json blob is shared, not downloaded again.
	if n := srv.Count("cdn", "GET"); n != 2 {
		t.Errorf("%d CDN downloads, want 2 (one per cache folder)", n)
	}
	checkCache(t, root)
}

func TestBranchMovesToANewSnapshot(t *testing.T) {
	srv := hubtest.New(t)
	files := qwenFiles(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", files)
	first := repo.Head("main")
	cache := t.TempDir()
	c := newClient(srv, cache, nil)
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	next := map[string][]byte{}
	for k, v := range files {
		next[k] = v
	}
	next["chat_template.jinja"] = []byte("{% for m in messages %}{{ m.content }}{% endfor %}")
	second := repo.Commit("main", next)
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
	if snap.Commit != second || string(mustRead(t, filepath.Join(root, "refs", "main"))) != second {
		t.Errorf("main moved to %s; snapshot %s", second, snap.Commit)
	}
	if _, err := os.Stat(filepath.Join(root, "snapshots", first, "tokenizer.json")); err != nil {
		t.Errorf("the old snapshot is gone: %v", err)
	}
	if got := mustRead(t, filepath.Join(snap.Dir, "chat_template.jinja")); string(got) != string(next["chat_template.jinja"]) {
		t.Errorf("chat_template.jinja = %q", got)
	}
	if n := srv.Count("cdn", "GET"); n != 1 {
		t.Errorf("%d CDN downloads, want 1: the blob of the unchanged tokenizer.json is reused", n)
	}
	checkCache(t, root)
}

func TestCorruptOrOversizedDownloadsLeaveNothing(t *testing.T) {
	files := qwenFiles(t)
	cases := []struct {
		name  string
		fault func(sha string, data []byte) ([]byte, int)
		max   int64
		want  string
	}{
		{"truncated", func(_ string, d []byte) ([]byte, int) { return d[:len(d)/2], len(d) }, 0, "download of tokenizer.json interrupted after 5711327 of 11422654 bytes"},
		{"short", func(_ string, d []byte) ([]byte, int) { return d[:len(d)-1], len(d) - 1 }, 0, "downloaded 11422653 bytes of tokenizer.json, the Hub announced 11422654"},
		{"corrupt", func(_ string, d []byte) ([]byte, int) {
			c := append([]byte(nil), d...)
			c[len(c)/2] ^= 1
			return c, len(c)
		}, 0, "its ETag says " + qwenTokenizerSHA256},
		{"oversized", nil, 1 << 20, "tokenizer.json is 11422654 bytes, more than the 1048576 allowed"},
		{"stalled", nil, 0, "of 11422654 bytes: no data for 100ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubtest.New(t)
			repo := srv.AddRepo("Qwen/Qwen3-8B", files)
			srv.CDNFault = tc.fault
			srv.CDNStall = tc.name == "stalled"
			cache := t.TempDir()
			c := newClient(srv, cache, nil)
			c.MaxFileSize = tc.max
			if srv.CDNStall {
				// Only the stalled download may time out: the others
				// must fail for their own reason however slow the machine.
				c.DownloadTimeout = 100 * time.Millisecond
			}
			_, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "X-Amz-Signature") {
				t.Errorf("the signed CDN URL leaked into the message: %v", err)
			}
			root := filepath.Join(cache, "models--Qwen--Qwen3-8B")
			blobs, _ := os.ReadDir(filepath.Join(root, "blobs"))
			if len(blobs) != 0 {
				t.Errorf("blobs left: %v", blobs)
			}
			if _, err := os.Lstat(filepath.Join(root, "snapshots", repo.Head("main"), "tokenizer.json")); err == nil {
				t.Error("a snapshot link to the bad download exists")
			}
			if tc.name == "oversized" && srv.Count("cdn", "") != 0 {
				t.Error("an oversized file was requested from the CDN")
			}
		})
	}
}

func TestNotAHub(t *testing.T) {
	// A wrong HF_ENDPOINT: a plain web server that answers everything.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"0123"`)
		w.Write([]byte("<html>welcome</html>"))
	}))
	defer plain.Close()
	c := &Client{Env: Env{Endpoint: plain.URL, CacheDir: t.TempDir()}}
	_, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err == nil || !strings.Contains(err.Error(), "no commit id in X-Repo-Commit") || !strings.Contains(err.Error(), "is HF_ENDPOINT ("+plain.URL+") a Hugging Face Hub?") {
		t.Errorf("wrong endpoint: %v", err)
	}
}

func TestBadNamesAreRefusedBeforeAnyRequest(t *testing.T) {
	srv := hubtest.New(t)
	c := newClient(srv, t.TempDir(), nil)
	for _, tc := range []struct{ repo, rev string }{
		{"../etc", "main"}, {"a/..", "main"}, {"a/b/c", "main"}, {"/abs/path", "main"}, {"a--b/c", "main"},
		{"a/b.git", "main"}, {"a/.b", "main"}, {"a/b", "../../x"}, {"a/b", "/etc"}, {"a/b", "a//b"}, {"a/b", "x@y"},
	} {
		if _, err := c.Snapshot(context.Background(), tc.repo, tc.rev, modelFiles); err == nil {
			t.Errorf("%s@%s accepted", tc.repo, tc.rev)
		}
	}
	if _, err := c.Snapshot(context.Background(), "a/b", "main", []File{{Name: "../x"}}); err == nil {
		t.Error("file ../x accepted")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for bad names", n)
	}
}

func TestProgressLine(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("Qwen/Qwen3-8B", qwenFiles(t))
	var buf bytes.Buffer
	c := newClient(srv, t.TempDir(), nil)
	c.Progress = &buf
	if _, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "downloading Qwen/Qwen3-8B tokenizer.json  11.4 MB / 11.4 MB") || !strings.Contains(out, "/s") {
		t.Errorf("progress %q", out)
	}
	if lines := strings.Count(out, "\n"); lines != 3 {
		t.Errorf("%d finished progress lines, want 3 (one per file downloaded): %q", lines, out)
	}
}

func TestNormalizeEtag(t *testing.T) {
	for in, want := range map[string]string{
		`"abc123"`:   "abc123",
		`W/"abc123"`: "abc123",
		`abc123`:     "abc123",
		` "a1" `:     "a1",
	} {
		if got := normalizeEtag(in); got != want {
			t.Errorf("normalizeEtag(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorCodeOnAnyStatus (#27 item 18): the Hub's X-Error-Code is read
// whatever the status: RepositoryNotFound on a 404 (huggingface_hub's
// RepositoryNotFoundError) and RepoNotFound on a redirect name the missing
// repo and say how to fix it, an unknown code is shown, and a 404 without
// a code still names the repo, the revision and the file it may be.
func TestErrorCodeOnAnyStatus(t *testing.T) {
	srv := hubtest.New(t)
	srv.Answer = func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/acme/gone/"):
			hubtest.HubError(w, http.StatusNotFound, "RepositoryNotFound", "Repository not found")
		case strings.HasPrefix(r.URL.Path, "/acme/moved/"):
			w.Header().Set("Location", "/acme/elsewhere/resolve/main/tokenizer.json")
			hubtest.HubError(w, http.StatusTemporaryRedirect, "RepoNotFound", "Repository not found")
		case strings.HasPrefix(r.URL.Path, "/acme/odd/"):
			hubtest.HubError(w, http.StatusConflict, "SomethingNew", "try later")
		case strings.HasPrefix(r.URL.Path, "/acme/bare404/"):
			hubtest.HubError(w, http.StatusNotFound, "", "Not found")
		default:
			return false
		}
		return true
	}
	cases := []struct {
		repo string
		kind Kind
		want string
	}{
		{"acme/gone", RepoNotFound, "acme/gone: no such model on " + srv.URL() + ", or it is private or gated: set HF_TOKEN"},
		{"acme/moved", RepoNotFound, "acme/moved: no such model on " + srv.URL()},
		{"acme/odd", HTTPStatus, "HTTP 409 SomethingNew (Hub: try later)"},
		{"acme/bare404", HTTPStatus, `HTTP 404 (not found: no model acme/bare404 on ` + srv.URL() + `, no revision "main" of it, or no file tokenizer.json there)`},
	}
	for _, tc := range cases {
		c := newClient(srv, t.TempDir(), nil)
		_, err := c.Snapshot(context.Background(), tc.repo, "main", modelFiles)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (kind %v), want %q", tc.repo, err, e, tc.want)
		}
	}
}
