package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testutil"
)

// TestDatasetISLMeasured runs probe | compose --dataset FILE --isl 200 |
// send --dry-run | measure from the built binaries on a ShareGPT file
// (a two-turn dialog, one with a system prompt, one that opens with a
// reply and is skipped, one with odd whitespace), on the embedded Qwen3
// with the marker on the system prompt (falling back to the first user
// turn) and on Llama 3 with it at the first turn's start: measure's
// templated count of every payload is its target_isl (the second turn's:
// the first's target + wrap + the dataset reply + 200), and the summary
// is 4 of 4 exact against target and expected.
func TestDatasetISLMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	data := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "sharegpt.json")
	for _, tc := range []struct{ name, target string }{{"", "system_suffix"}, {"llama3", "first_turn_prefix"}} {
		name, target := tc.name, tc.target
		t.Run(name+"/"+target, func(t *testing.T) {
			tokenizer := ""
			if name != "" {
				tokenizer = "--tokenizer " + testutil.RefModel(t, name)
			}
			dir := t.TempDir()
			sum, reqs := filepath.Join(dir, "run.json"), filepath.Join(dir, "measured.jsonl")
			pipeline := `set -eo pipefail
"$0/probe" $4 --apply-chat-template --cache-bust $5 --now 2025-07-10T12:00:00 \
  | "$0/compose" $4 --dataset "$1" --isl 200 --model m \
  | "$0/send" --dry-run \
  | "$0/measure" $4 --apply-chat-template --summary-json "$2" > "$3"`
			cmd := exec.Command("bash", "-c", pipeline, bin, data, sum, reqs, tokenizer, target)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pipeline: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), "1 of 4 sharegpt conversations skipped") {
				t.Errorf("stderr %q: want the skipped dialog counted", stderr.String())
			}
			lines := testutil.ReadJSONL[json.RawMessage](t, reqs)
			if len(lines) != 4 {
				t.Fatalf("%d records, want 4", len(lines))
			}
			turn0 := map[string]int{}
			var second struct {
				id     string
				target int
			}
			for _, line := range lines {
				testutil.ValidateSchema(t, "measurement.schema.json", line)
				var r struct {
					ID       string `json:"conversation_id"`
					Turn     int    `json:"turn"`
					Target   int    `json:"target_isl"`
					Expected *int   `json:"expected_isl"`
					ISL      struct {
						Templated *int `json:"templated"`
					} `json:"isl"`
				}
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				if r.ISL.Templated == nil || *r.ISL.Templated != r.Target || r.Expected == nil || *r.Expected != r.Target {
					t.Errorf("%s turn %d: measure counts %v, expected %v, target %d", r.ID, r.Turn, r.ISL.Templated, r.Expected, r.Target)
				}
				if r.Turn == 0 {
					turn0[r.ID] = r.Target
				} else {
					second.id, second.target = r.ID, r.Target
				}
			}
			// Every first turn without a system prompt is --isl itself;
			// the later one is above its first turn's target by more
			// than --isl (the wrap and the reply).
			// Dialog c is skipped, so d is conv-2.
			if turn0["conv-0"] != 200 || turn0["conv-2"] != 200 || turn0["conv-1"] <= 200 || second.id != "conv-0" || second.target <= 400 {
				t.Errorf("first-turn targets %v, second turn %+v", turn0, second)
			}
			raw, err := os.ReadFile(sum)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidateSchema(t, "summary.schema.json", raw)
			type row struct{ N, Exact int }
			var s struct {
				VsTarget   row `json:"vs_target"`
				VsExpected row `json:"vs_expected"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			if s.VsTarget != (row{4, 4}) || s.VsExpected != (row{4, 4}) {
				t.Errorf("summary vs target %+v, vs expected %+v; want 4 of 4 exact", s.VsTarget, s.VsExpected)
			}
		})
	}
}
