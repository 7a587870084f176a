package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestExactLivePipeline runs probe | compose --live | send --exact from
// the built binaries against a test server whose replies stop at random
// lengths (--exact-osl=false lets them): every request's
// usage.prompt_tokens is its target_isl, later turns included.
func TestExactLivePipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 5})
	cmd := exec.Command("bash", "-c", `set -eo pipefail; b=$0
"$b/probe" --apply-chat-template --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$b/compose" --isl 120 --osl 40 --turns 4 --conversations 5 --shared-system-prompt-length 30 --live --model m \
  | "$b/send" --exact --exact-osl=false --url "$1" --concurrency 3`, bin, srv.URL())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	checkUsageIsTarget(t, "", out, 20)
}

// checkUsageIsTarget: out holds want send records, valid, each with the
// server's usage.prompt_tokens equal to its target_isl.
func checkUsageIsTarget(t *testing.T, name string, out []byte, want int) {
	t.Helper()
	lines := withoutRunRecord(strings.Split(strings.TrimSpace(string(out)), "\n"))
	if len(lines) != want {
		t.Fatalf("%s: %d records, want %d", name, len(lines), want)
	}
	for _, line := range lines {
		testutil.ValidateSchema(t, "request.schema.json", []byte(line))
		var rec struct {
			Turn   int `json:"turn"`
			Target int `json:"target_isl"`
			Result struct {
				Usage struct {
					PromptTokens int `json:"prompt_tokens"`
				} `json:"usage"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Result.Usage.PromptTokens != rec.Target {
			t.Errorf("%s turn %d: server counts %d, target %d", name, rec.Turn, rec.Result.Usage.PromptTokens, rec.Target)
		}
	}
}

// TestExactLiveDataset: probe | compose --dataset --isl --live | send
// --exact against a server whose replies stop at random lengths: every
// request of the ShareGPT file's dialogs (its multi-turn one included)
// counts its target by the server's usage, for Qwen3 and Llama 3.
func TestExactLiveDataset(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	data := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "sharegpt.json")
	for _, name := range []string{"", "llama3"} {
		tokenizer := ""
		cfg := testserver.Config{RandomStop: true, Seed: 5}
		if name != "" {
			tokenizer = "--tokenizer " + testutil.RefModel(t, name)
			cfg.Model = testmodel.Source(t, name)
		}
		srv := testserver.StartTest(t, cfg)
		cmd := exec.Command("bash", "-c", `set -eo pipefail; b=$0
"$b/probe" $3 --apply-chat-template --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$b/compose" $3 --dataset "$2" --isl 90 --live --model m \
  | "$b/send" --exact --exact-osl=false --url "$1" --concurrency 2`, bin, srv.URL(), data, tokenizer)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		checkUsageIsTarget(t, name, out, 4)
	}
}
