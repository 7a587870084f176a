package e2e

import (
	"os/exec"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestExactLivePipeline runs probe | compose --live | send --exact from
// the built binaries against a test server whose replies stop at random
// lengths: every request's usage.prompt_tokens is its target_isl, later
// turns included.
func TestExactLivePipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{RandomStop: true, Seed: 5})
	cmd := exec.Command("bash", "-c", `set -eo pipefail; b=$0
"$b/probe" --apply-chat-template --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$b/compose" --isl 120 --osl 40 --turns 4 --conversations 5 --shared-system-prompt-length 30 --live --model m \
  | "$b/send" --exact --url "$1" --concurrency 3`, bin, srv.URL())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d records, want 20", len(lines))
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
			t.Errorf("turn %d: server counts %d, target %d", rec.Turn, rec.Result.Usage.PromptTokens, rec.Target)
		}
	}
}
