package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureDeepSeekV32: measure --server vllm counts every body of the
// DeepSeek-V3.2 corpus as DeepSeek's encoder and the Python tokenizers
// package do (internal/serverprofile/testdata/deepseek-v32-expect.jsonl.gz,
// written by scripts/renderers/deepseek-v32-ref.py), the renderer chosen
// by the folder's config.json model_type, and says so in isl.renderer; a
// body the encoder raises on is an isl.error, still written back.
func TestMeasureDeepSeekV32(t *testing.T) {
	_, cases := rendererExpectations(t, "deepseek-v32-expect.jsonl.gz")
	var in strings.Builder
	var want []int // -1: the encoder raises
	for _, c := range cases {
		in.Write(c.Body)
		in.WriteByte('\n')
		if c.Error != "" {
			c.Count = -1
		}
		want = append(want, c.Count)
	}
	code, out, errs := runCLI(in.String(), "--tokenizer", testutil.DeepSeekV32Model(t), "--server", "vllm",
		"--apply-chat-template", "--workers", "1")
	if code != 0 && code != 1 {
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
				Error     string `json:"error"`
			} `json:"isl"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if i < 5 {
			testutil.ValidateSchema(t, "measurement.schema.json", []byte(l))
		}
		if want[i] < 0 {
			if r.ISL.Templated != nil {
				t.Errorf("body %d: templated %d, the encoder raises", i+1, *r.ISL.Templated)
			}
			continue
		}
		if r.ISL.Templated == nil || *r.ISL.Templated != want[i] || r.ISL.Renderer != "deepseek_v32" {
			t.Errorf("body %d: templated %v renderer %q error %q, encoder %d", i+1, r.ISL.Templated, r.ISL.Renderer, r.ISL.Error, want[i])
		}
	}
}
