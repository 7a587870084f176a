package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestWarmupEndToEnd runs probe | compose | send --warmup 4 | measure:
// send marks the first 4 requests warmup, measure counts them as left
// out, and its performance section holds the other 16 only.
func TestWarmupEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{})
	dir := t.TempDir()
	sum, reqs := filepath.Join(dir, "run.json"), filepath.Join(dir, "requests.jsonl")
	pipeline := `"$0/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
	  | "$0/compose" --isl 200 --osl 8 --conversations 10 --turns 2 --seed 1 --model m \
	  | "$0/send" --url "$1" --concurrency 3 --warmup 4 | tee "$3" \
	  | "$0/measure" --apply-chat-template --summary-json "$2" >/dev/null`
	cmd := exec.Command("bash", "-c", pipeline, bin, srv.URL(), sum, reqs)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pipeline: %v\n%s", err, stderr.String())
	}
	warm := 0
	for _, line := range withoutRunRecord(testutil.ReadJSONL[json.RawMessage](t, reqs)) {
		var r struct {
			Warmup bool `json:"warmup"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if r.Warmup {
			warm++
		}
		testutil.ValidateSchema(t, "request.schema.json", line)
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var s struct {
		Requests       int `json:"requests"`
		WarmupExcluded int `json:"warmup_excluded"`
		Performance    *struct {
			Requests int `json:"requests"`
		} `json:"performance"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if warm != 4 || s.WarmupExcluded != 4 || s.Requests != 16 || s.Performance == nil || s.Performance.Requests != 16 {
		t.Errorf("%d warmup records; summary: %d requests, %d warmup left out, performance %+v; want 4, 16, 4, 16", warm, s.Requests, s.WarmupExcluded, s.Performance)
	}
}
