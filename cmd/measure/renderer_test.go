package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureHarmony: measure --server vllm --renderer harmony counts every
// body of the Harmony corpus as the real openai_harmony does
// (internal/serverprofile/testdata/harmony-expect.jsonl.gz, written by
// scripts/renderers/harmony-ref.py), and says so in isl.renderer. The
// gptoss conformance folder has no config.json, hence --renderer.
func TestMeasureHarmony(t *testing.T) {
	header, cases := rendererExpectations(t, "harmony-expect.jsonl.gz")
	now := header.Now
	var in strings.Builder
	var want []int
	for _, c := range cases {
		in.Write(c.Body)
		in.WriteByte('\n')
		want = append(want, c.Count)
	}
	code, out, errs := runCLI(in.String(), "--tokenizer", testutil.RefModel(t, "gptoss"), "--server", "vllm",
		"--apply-chat-template", "--renderer", "harmony", "--now", now+"T00:00:00", "--workers", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records out, %d in", len(lines), len(want))
	}
	for i, l := range lines {
		var r struct {
			ISL struct {
				Templated *int   `json:"templated"`
				Renderer  string `json:"renderer"`
			} `json:"isl"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if i < 5 {
			testutil.ValidateSchema(t, "measurement.schema.json", []byte(l))
		}
		if r.ISL.Templated == nil || *r.ISL.Templated != want[i] || r.ISL.Renderer != "harmony" {
			t.Errorf("body %d: templated %v renderer %q, openai_harmony %d", i+1, r.ISL.Templated, r.ISL.Renderer, want[i])
		}
	}
	// --renderer acts on templated counts only, and names what it refuses.
	if code, _, errs := runCLI("", "--renderer", "harmony"); code != 2 || !strings.Contains(errs, "--renderer") {
		t.Errorf("--renderer without --apply-chat-template: exit %d, %s", code, errs)
	}
	// deepseek_v32 on a model without DeepSeek-V3.2's tokens (the embedded
	// Qwen3) is refused naming the missing token.
	if code, _, errs := runCLI("", "--apply-chat-template", "--renderer", "deepseek_v32"); code != 2 || !strings.Contains(errs, "DeepSeek-V3.2's encoder") {
		t.Errorf("--renderer deepseek_v32: exit %d, %s", code, errs)
	}
}

// TestMeasureHarmonyResponses: measure --server vllm --renderer harmony
// counts every Responses body of the Harmony Responses corpus
// (harmony-responses-expect.jsonl.gz, harmony-ref.py --responses) as vLLM's
// Responses path and the real openai_harmony do, and keeps each body vLLM
// refuses with its reason.
func TestMeasureHarmonyResponses(t *testing.T) {
	header, cases := rendererExpectations(t, "harmony-responses-expect.jsonl.gz")
	var in strings.Builder
	refused := 0
	for _, c := range cases {
		in.Write(c.Body)
		in.WriteByte('\n')
		if c.Error != "" {
			refused++
		}
	}
	code, out, errs := runCLI(in.String(), "--tokenizer", testutil.RefModel(t, "gptoss"), "--server", "vllm",
		"--apply-chat-template", "--renderer", "harmony", "--now", header.Now+"T00:00:00", "--workers", "1")
	// The refused bodies fail their lines (exit 1), each named.
	if code != 1 || refused == 0 || strings.Count(errs, "vllm would refuse this request: harmony") != refused {
		t.Fatalf("exit %d, %d refusals expected: %s", code, refused, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d records out, %d in", len(lines), len(cases))
	}
	counted := 0
	for i, l := range lines {
		var r struct {
			ISL struct {
				Templated *int   `json:"templated"`
				Renderer  string `json:"renderer"`
				Error     string `json:"error"`
			} `json:"isl"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		c := cases[i]
		if c.Error != "" {
			if r.ISL.Templated != nil || r.ISL.Error == "" {
				t.Errorf("body %d: vLLM refuses it (%s); measure: templated %v, error %q", i+1, c.Error, r.ISL.Templated, r.ISL.Error)
			}
			continue
		}
		counted++
		if r.ISL.Templated == nil || *r.ISL.Templated != c.Count || r.ISL.Renderer != "harmony" {
			t.Errorf("body %d: templated %v renderer %q, openai_harmony %d (%s)", i+1, r.ISL.Templated, r.ISL.Renderer, c.Count, r.ISL.Error)
		}
	}
	if counted < 30 {
		t.Fatalf("%d Responses bodies counted, want at least 30", counted)
	}
}
