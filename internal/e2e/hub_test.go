package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/hub/hubtest"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/testutil"
)

// hubTool runs a tool with the Hub environment pointed at the stand-in
// and cache, stdin in; it returns stdout, stderr and the exit code.
func hubTool(t *testing.T, env []string, stdin []byte, tool string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(buildTools(t), tool), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestToolsResolveHubModels runs probe | compose | measure with
// --tokenizer ORG/NAME against the loopback stand-in Hub serving the
// embedded Qwen3 files: probe downloads them (tokenizer.json through the
// CDN), compose and measure find them in the cache, measure works with a
// pinned --revision once the Hub is gone, at main with a warning, and
// under HF_HUB_OFFLINE.
func TestToolsResolveHubModels(t *testing.T) {
	src, err := modelsrc.Default()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if files[name], err = src.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", files)
	cache := t.TempDir()
	env := []string{"HF_ENDPOINT=" + srv.URL(), "HF_HUB_CACHE=" + cache, "HF_HUB_OFFLINE=", "TRANSFORMERS_OFFLINE=",
		"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", "HF_TOKEN_PATH=" + filepath.Join(cache, "no-token")}

	probe, stderr, code := hubTool(t, env, nil, "probe", "--tokenizer", "Qwen/Qwen3-8B", "--apply-chat-template", "--cache-bust", "first_turn_prefix", "--now", "2025-07-10T12:00:00")
	if code != 0 {
		t.Fatalf("probe: exit %d\n%s", code, stderr)
	}
	testutil.ValidateSchema(t, "probe.schema.json", []byte(probe))
	var rec struct {
		Tokenizer struct {
			Source, SHA256 string
		}
	}
	if err := json.Unmarshal([]byte(probe), &rec); err != nil {
		t.Fatal(err)
	}
	// The SHA-256 is Qwen3's tokenizer.json LFS oid on the Hub.
	if rec.Tokenizer.Source != "Qwen/Qwen3-8B" || rec.Tokenizer.SHA256 != "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4" {
		t.Errorf("probe tokenizer %+v", rec.Tokenizer)
	}
	if n := srv.Count("cdn", "GET"); n != 1 {
		t.Errorf("%d CDN downloads, want 1", n)
	}

	// compose takes the model from the probe record: cached, one HEAD.
	gets := srv.Count("", "GET")
	convs, stderr, code := hubTool(t, env, []byte(probe), "compose", "--isl", "200", "--conversations", "2", "--model", "Qwen/Qwen3-8B")
	if code != 0 || strings.Count(convs, "\n") != 2 {
		t.Fatalf("compose: exit %d, %d lines\n%s", code, strings.Count(convs, "\n"), stderr)
	}
	if n := srv.Count("", "GET"); n != gets {
		t.Errorf("compose downloaded again (%d GETs)", n-gets)
	}

	// measure at the pinned commit, with the Hub gone: no network, no
	// warning, Qwen3's count of "Hello world" (the Rust library's: 2).
	srv.Hub.Close()
	srv.CDN.Close()
	out, stderr, code := hubTool(t, env, []byte(`{"text":"Hello world"}`+"\n"), "measure", "--tokenizer", "Qwen/Qwen3-8B", "--revision", repo.Head("main"))
	if code != 0 || out != `{"text":"Hello world","tokens":2}`+"\n" || stderr != "" {
		t.Errorf("measure at the pinned commit, Hub down: exit %d, %q, stderr %q", code, out, stderr)
	}
	// At main: the cached snapshot, with a one-line warning.
	out, stderr, code = hubTool(t, env, []byte(`{"text":"Hello world"}`+"\n"), "measure", "--tokenizer", "Qwen/Qwen3-8B")
	if code != 0 || out != `{"text":"Hello world","tokens":2}`+"\n" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "measure: warning: cannot reach "+srv.URL()) {
		t.Errorf("measure at main, Hub down: exit %d, %q, stderr %q", code, out, stderr)
	}
	// HF_HUB_OFFLINE: the cache, silently.
	out, stderr, code = hubTool(t, append(env, "HF_HUB_OFFLINE=1"), []byte(`{"text":"Hello world"}`+"\n"), "measure", "--tokenizer", "Qwen/Qwen3-8B")
	if code != 0 || out != `{"text":"Hello world","tokens":2}`+"\n" || stderr != "" {
		t.Errorf("measure offline: exit %d, %q, stderr %q", code, out, stderr)
	}
}

// TestToolsReportGatedHubModels: a gated model without a token fails
// before any output, with a message that says so and names HF_TOKEN.
func TestToolsReportGatedHubModels(t *testing.T) {
	srv := hubtest.New(t)
	srv.AddRepo("meta-llama/Llama-3.1-8B-Instruct", map[string][]byte{"tokenizer.json": []byte("{}")}).Gated = true
	cache := t.TempDir()
	env := []string{"HF_ENDPOINT=" + srv.URL(), "HF_HUB_CACHE=" + cache, "HF_HUB_OFFLINE=", "TRANSFORMERS_OFFLINE=",
		"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", "HF_TOKEN_PATH=" + filepath.Join(cache, "no-token")}
	for _, tool := range []string{"probe", "measure"} {
		out, stderr, code := hubTool(t, env, nil, tool, "--tokenizer", "meta-llama/Llama-3.1-8B-Instruct")
		if code != 1 || out != "" || !strings.HasPrefix(stderr, tool+": --tokenizer meta-llama/Llama-3.1-8B-Instruct: meta-llama/Llama-3.1-8B-Instruct is a gated model") || !strings.Contains(stderr, "HF_TOKEN") {
			t.Errorf("%s on a gated model: exit %d, stdout %q, stderr %q", tool, code, out, stderr)
		}
	}
}
