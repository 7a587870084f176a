package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestStagesSummary: records of a staged run (send --stages) give one
// row per stage in the summary, its figures over its own requests, and
// the highest stage meeting the SLO: stage 0's two requests have TTFT
// 100 ms, stage 1's 100 and 900 ms, so under ttft=500ms stage 0 meets
// (100 %) and stage 1 misses (50 % < 90 %).
func TestStagesSummary(t *testing.T) {
	rec := func(i, stage, conc int, ttftMs int) string {
		return fmt.Sprintf(`{"kind":"islkit.request","schema_version":1,"benchmark_id":"b","conversation_id":"c%d","conversation_index":%d,"turn":0,"pass":0,"target_isl":10,"max_tokens":4,"marker":"","cache_bust":"none","marker_landing":"none","dry_run":false,`+
			`"stage":{"index":%d,"concurrency":%d},"payload":{"model":"m","messages":[{"role":"user","content":"Hi"}]},`+
			`"result":{"start_ns":%d,"latency_ns":1000000000,"ttft_ns":%d,"itl_ns":[300000000,300000000],"status":200,"ok":true,"stream":true,"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}}`+"\n",
			i, i, stage, conc, int64(i)*1_000_000_000, int64(ttftMs)*1_000_000)
	}
	in := rec(0, 0, 1, 100) + rec(1, 0, 1, 100) + rec(2, 1, 2, 100) + rec(3, 1, 2, 900)
	dir := t.TempDir()
	sum := filepath.Join(dir, "s.json")
	code, _, errs := runCLI(in, "--summary", "--slo", "ttft=500ms", "--summary-json", sum)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "the highest stage meeting it is stage 0 (concurrency 1); the lowest missing it, stage 1 (concurrency 2)") {
		t.Errorf("summary:\n%s", errs)
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var r struct {
		Stages []struct {
			Index       int      `json:"index"`
			Concurrency int      `json:"concurrency"`
			Requests    int      `json:"requests"`
			DurationS   float64  `json:"duration_s"`
			TTFTP50     *float64 `json:"ttft_p50_ms"`
			Verdict     string   `json:"slo_verdict"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	// Stage 1: requests at 2 s and 3 s, each 1 s long: 2 s; TTFT p50 of
	// 100 and 900 is 500.
	if len(r.Stages) != 2 || r.Stages[1].Concurrency != 2 || r.Stages[1].Requests != 2 || r.Stages[1].DurationS != 2 ||
		r.Stages[1].TTFTP50 == nil || *r.Stages[1].TTFTP50 != 500 || r.Stages[0].Verdict != "meets" || r.Stages[1].Verdict != "misses" {
		t.Errorf("stages %+v", r.Stages)
	}
	// --min-goodput 0.5: both meet.
	code, _, errs = runCLI(in, "--summary", "--slo", "ttft=500ms", "--min-goodput", "0.5")
	if code != 0 || !strings.Contains(errs, "every stage met it, up to stage 1 (concurrency 2)") {
		t.Errorf("min goodput 0.5: exit %d\n%s", code, errs)
	}
	if code, _, errs := runCLI(in, "--min-goodput", "0"); code != 2 || !strings.Contains(errs, "--min-goodput 0") {
		t.Errorf("--min-goodput 0: exit %d %q", code, errs)
	}
	// Two sweeps compared on one page.
	page := filepath.Join(dir, "cmp.html")
	if code, _, errs := runCLI("", "--compare", sum, sum, "--report", page); code != 0 {
		t.Fatalf("compare: exit %d %s", code, errs)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-sweep="0" data-stage="1" data-figure="ttft_p50"`, `data-sweep="1" data-stage="0" data-figure="itl_p99"`, "SLO ttft"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("comparison page lacks %q", want)
		}
	}
}
