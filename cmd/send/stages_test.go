package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestStagesFlags: the staged-run flags are refused where they mean
// nothing, with exit 2 and the flag named.
func TestStagesFlags(t *testing.T) {
	in := writeInput(t, convLine)
	url := "http://127.0.0.1:1"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--stage-duration", "1s"}, "--stage-duration"},
		{[]string{"--slo", "ttft=1s"}, "--slo"},
		{[]string{"--stages", "concurrency:1,2", "--stage-requests", "2", "--min-goodput", "0.5"}, "--min-goodput"},
		{[]string{"--stages", "load:1,2", "--stage-requests", "2"}, "want concurrency:LEVELS"},
		{[]string{"--stages", "concurrency:1,2"}, "--stage-duration D or --stage-requests N"},
		{[]string{"--stages", "concurrency:1,2", "--stage-requests", "2", "--concurrency", "4"}, "drop --concurrency"},
		{[]string{"--stages", "concurrency:1,2", "--stage-requests", "2", "--requests", "4"}, "drop --requests"},
		{[]string{"--stages", "concurrency:1,2", "--stage-requests", "2", "--until-slo"}, "give it with --slo"},
		{[]string{"--stages", "concurrency:4,2", "--stage-requests", "2", "--until-slo", "--slo", "ttft=1s"}, "rising levels"},
		{[]string{"--stages", "concurrency:1,2", "--stage-requests", "2", "--until-slo", "--slo", "ttft=1s", "--min-goodput", "1.5"}, "--min-goodput 1.5"},
		{[]string{"--stages", "rate:1,2", "--stage-requests", "2", "--stage-cooldown=-1s"}, "--stage-cooldown -1s"},
	} {
		code, _, errs := runCLI(append(append([]string{"--url", url}, c.args...), in)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if code, _, errs := runCLI("--dry-run", "--stages", "concurrency:1,2", in); code != 2 || !strings.Contains(errs, "--stages") {
		t.Errorf("--dry-run --stages: exit %d, %q; want 2 naming --stages", code, errs)
	}
}

// TestStagesRun: a staged run's run record names its plan (schema-
// checked), each request record its stage, and stderr each stage's
// figures.
func TestStagesRun(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	in := writeInput(t, convLine)
	code, out, errs := runCLIAll("--url", s.URL(), "--stages", "rate:50..100*2", "--stage-requests", "3", "--warmup", "1",
		"--stage-cooldown", "10ms", "--slo", "e2e=10s", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	testutil.ValidateSchema(t, "run.schema.json", []byte(lines[0]))
	var run struct {
		Stages struct {
			Spec     string    `json:"spec"`
			Kind     string    `json:"kind"`
			Levels   []float64 `json:"levels"`
			Requests int       `json:"stage_requests"`
			Cooldown string    `json:"cooldown"`
			Warmup   int       `json:"warmup_per_stage"`
			SLO      string    `json:"slo"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &run); err != nil {
		t.Fatal(err)
	}
	st := run.Stages
	if st.Spec != "rate:50..100*2" || st.Kind != "rate" || len(st.Levels) != 2 || st.Levels[0] != 50 || st.Levels[1] != 100 ||
		st.Requests != 3 || st.Cooldown != "10ms" || st.Warmup != 1 || st.SLO != "e2e=10000ms" {
		t.Errorf("run record's stages %+v", st)
	}
	// Each stage: one warmup request and three measured ones.
	count := map[string]int{}
	for _, l := range lines[1:] {
		var r struct {
			Warmup bool `json:"warmup"`
			Stage  *struct {
				Index int     `json:"index"`
				Rate  float64 `json:"rate"`
			} `json:"stage"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Stage == nil {
			t.Fatalf("record without a stage (%v): %s", err, l)
		}
		key := strings.Repeat("w", map[bool]int{true: 1}[r.Warmup]) + string(rune('0'+r.Stage.Index))
		count[key]++
		if want := []float64{50, 100}[r.Stage.Index]; r.Stage.Rate != want {
			t.Errorf("stage %d at rate %v, want %v", r.Stage.Index, r.Stage.Rate, want)
		}
	}
	if count["0"] != 3 || count["1"] != 3 || count["w0"] != 1 || count["w1"] != 1 {
		t.Errorf("records per stage %v, want 3 measured and 1 warmup in each", count)
	}
	for _, want := range []string{"send: stage 0 (rate 50/s): 3 requests", "send: stage 1 (rate 100/s): 3 requests", "goodput 100% (meets)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
