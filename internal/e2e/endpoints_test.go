package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestExactEndpointsMeasured runs probe --endpoint E | compose --live |
// send --exact --warmup 2 --ramp-up | measure from the built binaries
// against a vLLM-counting test server whose replies stop at random
// lengths, for 3-turn Responses conversations with instructions (the
// embedded Qwen3) and for completions on Mistral 7B (its BOS counted by
// the server). The warmup requests are the first two of the dataset. Every record measure writes reports the server's count
// under its endpoint's usage member (input_tokens, prompt_tokens), equal
// to target_isl; the summary leaves the two warmup requests out, its
// "vs target" and "vs server" rows are all exact, and it carries the
// client verdict.
func TestExactEndpointsMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	now := time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ep, model, field, probe, compose string
		requests                         int // warmup included
	}{
		{"responses", "", "input_tokens", "--apply-chat-template", "--turns 3 --conversations 4 --shared-system-prompt-length 30", 12},
		{"completions", "mistral7b", "prompt_tokens", "", "--conversations 8", 8},
	} {
		t.Run(tc.ep, func(t *testing.T) {
			tokenizer := ""
			if tc.model != "" {
				tokenizer = "--tokenizer " + testutil.RefModel(t, tc.model)
			}
			srv := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, tc.model), RandomStop: true, Seed: 7, Now: now})
			dir := t.TempDir()
			sum, reqs := filepath.Join(dir, "run.json"), filepath.Join(dir, "measured.jsonl")
			pipeline := `set -eo pipefail
"$0/probe" $4 --endpoint $5 $7 --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$0/compose" $4 --isl 150 --osl 40 $6 --seed 2 --live --model m \
  | "$0/send" --exact --endpoint $5 --url "$1" --concurrency 3 --warmup 2 --ramp-up 30ms \
  | "$0/measure" $4 --apply-chat-template --summary-json "$2" > "$3"`
			cmd := exec.Command("bash", "-c", pipeline, bin, srv.URL(), sum, reqs, tokenizer, tc.ep, tc.compose, tc.probe)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pipeline: %v\n%s", err, stderr.String())
			}
			lines := withoutRunRecord(testutil.ReadJSONL[json.RawMessage](t, reqs))
			warm := 0
			for _, line := range lines {
				testutil.ValidateSchema(t, "measurement.schema.json", line)
				var r struct {
					Endpoint string `json:"endpoint"`
					Turn     int    `json:"turn"`
					Target   int    `json:"target_isl"`
					Warmup   bool   `json:"warmup"`
					ISL      struct {
						Counted     string `json:"counted"`
						Templated   *int   `json:"templated"`
						Endpoint    string `json:"endpoint"`
						ServerField string `json:"server_field"`
						Server      *int   `json:"server"`
					} `json:"isl"`
				}
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				if r.Warmup {
					warm++
				}
				i := r.ISL
				if r.Endpoint != tc.ep || i.Endpoint != tc.ep || i.ServerField != tc.field || i.Counted != "templated" ||
					i.Server == nil || *i.Server != r.Target || i.Templated == nil || *i.Templated != r.Target {
					t.Errorf("turn %d (target %d): endpoint %q, isl %+v (server %s, templated %s)", r.Turn, r.Target, r.Endpoint, i, ptr(i.Server), ptr(i.Templated))
				}
			}
			if len(lines) != tc.requests || warm != 2 {
				t.Fatalf("%d records, %d warmup; want %d and 2", len(lines), warm, tc.requests)
			}
			data, err := os.ReadFile(sum)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidateSchema(t, "summary.schema.json", data)
			type row struct{ N, Exact int }
			var s struct {
				Requests       int `json:"requests"`
				WarmupExcluded int `json:"warmup_excluded"`
				VsTarget       row `json:"vs_target"`
				VsServer       row `json:"vs_server"`
				Performance    *struct {
					Requests int `json:"requests"`
					Client   *struct {
						Requests  int  `json:"requests"`
						Saturated bool `json:"saturated"`
					} `json:"client"`
				} `json:"performance"`
			}
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			n := tc.requests - 2
			if s.Requests != n || s.WarmupExcluded != 2 || s.VsTarget != (row{n, n}) || s.VsServer != (row{n, n}) {
				t.Errorf("summary: %d requests, %d warmup left out, vs target %+v, vs server %+v; want %d, 2, all exact", s.Requests, s.WarmupExcluded, s.VsTarget, s.VsServer, n)
			}
			if s.Performance == nil || s.Performance.Requests != n || s.Performance.Client == nil || s.Performance.Client.Requests != n {
				t.Errorf("performance %+v: want %d requests and the client verdict on them", s.Performance, n)
			}
		})
	}
}

func ptr(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}
