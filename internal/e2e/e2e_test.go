// Package e2e runs the four tools as a user does, from built binaries.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testutil"
)

// buildTools compiles the commands into a temporary folder.
func buildTools(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin+"/", "./cmd/probe", "./cmd/compose", "./cmd/send", "./cmd/measure")
	cmd.Dir = testutil.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDemo runs scripts/demo.sh (what `make demo` and the README run) and
// checks what it promises: every first turn's wire ISL is exactly --isl.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	root := testutil.RepoRoot(t)
	bin := buildTools(t)
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "summary.json")
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Env = append(os.Environ(), "BIN="+bin, "OUT="+filepath.Join(dir, "requests.jsonl"), "SUMMARY_JSON="+summaryPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var s struct {
		Requests int `json:"requests"`
		Failures struct {
			Total int `json:"total"`
		} `json:"failures"`
		VsTarget struct {
			N        int      `json:"n"`
			ExactPct *float64 `json:"exact_pct"`
		} `json:"vs_target"`
		ByTurn []struct {
			Turn     int `json:"turn"`
			Requests int `json:"requests"`
			VsTarget struct {
				N        int      `json:"n"`
				Exact    int      `json:"exact"`
				ExactPct *float64 `json:"exact_pct"`
			} `json:"vs_target"`
		} `json:"by_turn"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Requests == 0 || s.Failures.Total != 0 {
		t.Fatalf("summary: %d requests, %d failures", s.Requests, s.Failures.Total)
	}
	if len(s.ByTurn) == 0 || s.ByTurn[0].Turn != 0 {
		t.Fatalf("summary has no turn 0: %s", data)
	}
	first := s.ByTurn[0].VsTarget
	if first.N != 50 || first.Exact != 50 || first.ExactPct == nil || *first.ExactPct != 100 {
		t.Errorf("first turns: %d/%d exact (%v%%), want 50/50 = 100%%", first.Exact, first.N, first.ExactPct)
	}
	// Exact mode makes later turns exact too.
	if s.VsTarget.ExactPct == nil || *s.VsTarget.ExactPct != 100 {
		t.Errorf("all turns: %v%% exact, want 100%%", s.VsTarget.ExactPct)
	}
}
